import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createMetrics } from '../../src/http/metrics.ts'
import type { OpenDb } from '../../src/db/connect.ts'
import { insertWebhook, storeUnderTest } from '../helpers/store.ts'

// The queue's gauges of GET /metrics (CONTRACT §13), read from the database at scrape time: how
// many deliveries are queued, and how long the oldest due one has waited — found from each
// subscription's earliest due time, not by reading the whole queue. The serve has stopped (no
// worker moves the queue meanwhile) and the clock is the test's.

const NOW = Date.parse('2026-06-01T12:00:00.000Z')
const at = (s: number) => new Date(NOW + s * 1000).toISOString()

describe('metrics: the queue\'s gauges', () => {
  let s: Awaited<ReturnType<typeof storeUnderTest>>
  let opened: OpenDb
  before(async () => {
    s = await storeUnderTest()
    opened = s.opened
  })
  after(() => s.close())

  const gauges = async () => {
    const text = (await (await createMetrics(opened.db, { now: () => new Date(NOW) })).render()).body
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1])
    return { queued: value('travelops_deliveries_queued'), oldest: value('travelops_oldest_due_delivery_age_seconds') }
  }
  const queue = async (webhookId: string, dueAt: string | null) => {
    const event = `evt_${crypto.randomUUID()}`
    await opened.db.insertInto('events').values({ id: event, tenant_id: s.tenantId, name: 'order.created', payload: '{}', created_at: at(-3600) } as never).execute()
    await opened.db.insertInto('deliveries').values({
      id: `del_${crypto.randomUUID()}`, tenant_id: s.tenantId, webhook_id: webhookId, event_id: event, event: 'order.created',
      status: 'pending', attempts: 0, retries: 0, created_at: at(-3600), manual: 0, due_at: dueAt, next_retry_at: null,
    } as never).execute()
  }

  test('none queued: 0 and 0', async () => {
    assert.deepEqual(await gauges(), { queued: 0, oldest: 0 })
  })

  test('only deliveries due later: counted, and none has waited', async () => {
    const later = await insertWebhook(opened.db, s.tenantId)
    await queue(later, at(60))
    await queue(later, at(3600))
    await queue(later, null) // finished: not queued
    assert.deepEqual(await gauges(), { queued: 2, oldest: 0 })
  })

  test('the oldest due delivery of any subscription, whichever holds it and wherever it is in its queue', async () => {
    const [a, b, c] = [await insertWebhook(opened.db, s.tenantId), await insertWebhook(opened.db, s.tenantId), await insertWebhook(opened.db, s.tenantId)]
    await queue(a, at(-5))
    await queue(a, at(120))
    await queue(b, at(600))
    await queue(b, at(-42.5))
    await queue(b, at(-7))
    await queue(c, at(-1))
    assert.deepEqual(await gauges(), { queued: 8, oldest: 42.5 })
  })
})
