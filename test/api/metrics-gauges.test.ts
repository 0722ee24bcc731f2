import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createMetrics } from '../../src/http/metrics.ts'
import type { OpenDb } from '../../src/engine/port.ts'
import { testEngine } from '../helpers/engine.ts'
import { insertWebhook, storeUnderTest } from '../helpers/store.ts'

// The queue's gauges of GET /metrics (CONTRACT §13), read from the database at scrape time: how
// many deliveries are queued, and how long the oldest due one has waited — found from each
// subscription's earliest due time, not by reading the whole queue — and the count, on SQLite, a
// slice at a time with a turn of the event loop between two. The serve has stopped (no worker
// moves the queue meanwhile) and the clock is the test's.

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
    const text = (await (await createMetrics(opened.engine, { now: () => new Date(NOW) })).render()).body
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

  /** Plain count of the queue, as one statement. */
  const plain = async () => Number((await opened.db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('due_at', 'is not', null).executeTakeFirstOrThrow()).n)

  test('counted a slice at a time, the queue comes to the same count: ties, due times and subscriptions across the slices', async () => {
    // Three more subscriptions: one with a burst of 7 due at one instant between others, one with
    // one delivery, one with 5 due at two instants; and finished deliveries among them.
    const [burst, single, pairs] = [await insertWebhook(opened.db, s.tenantId), await insertWebhook(opened.db, s.tenantId), await insertWebhook(opened.db, s.tenantId)]
    await queue(burst, at(-30))
    for (let i = 0; i < 7; i++) await queue(burst, at(10))
    await queue(burst, at(20))
    await queue(burst, null)
    await queue(single, at(5))
    for (let i = 0; i < 5; i++) await queue(pairs, at(i % 2 === 0 ? 1 : 2))
    await queue(pairs, null)
    const total = await plain()
    assert.equal(total, 8 + 9 + 1 + 5, 'the deliveries queued by this file\'s tests')
    for (const slice of [1, 2, 3, 4, 5, 7, 8, 9, 22, 23, 24, 50]) assert.equal(await opened.engine.countQueued(slice), total, `slices of ${slice}`)
    assert.equal(await opened.engine.countQueued(), total, 'the default slice')
    // The earliest due time, a few subscriptions a statement: the queue's plain minimum.
    const min = (await opened.db.selectFrom('deliveries').select((eb) => eb.fn.min('due_at').as('m')).where('due_at', 'is not', null).executeTakeFirstOrThrow()).m
    assert.equal(min, at(-42.5))
    for (const chunk of [1, 2, 3, 4, 5, 6, 7, 100]) assert.equal(await opened.engine.earliestDue(chunk), min, `${chunk} subscriptions a statement`)
    assert.equal(await opened.engine.earliestDue(), min, 'the default chunk')
  })

  // PostgreSQL counts in one statement, on the server, while serve waits for the answer.
  if (testEngine() === 'sqlite') {
    test('on SQLite the count and the earliest due time give the event loop a turn after every slice', async () => {
      /** How many turns the event loop took while `work` ran. */
      const turnsDuring = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
        let turns = 0
        let on = true
        const tick = () => { turns++; if (on) setImmediate(tick) }
        setImmediate(tick)
        try {
          return [await work(), turns]
        } finally {
          on = false
        }
      }
      const total = await plain()
      assert.ok(total >= 20, `${total} queued`)
      const [n, countTurns] = await turnsDuring(() => opened.engine.countQueued(4))
      assert.equal(n, total)
      assert.ok(countTurns >= Math.floor(total / 4), `${countTurns} turns of the event loop while ${total} queued deliveries were counted 4 at a time`)
      const webhooks = Number((await opened.db.selectFrom('deliveries').select((eb) => eb.fn.count<number>('webhook_id').distinct().as('n'))
        .where('due_at', 'is not', null).executeTakeFirstOrThrow()).n)
      assert.ok(webhooks >= 6, `${webhooks} subscriptions with a queue`)
      const [first, dueTurns] = await turnsDuring(() => opened.engine.earliestDue(2))
      assert.equal(first, at(-42.5))
      assert.ok(dueTurns >= Math.floor(webhooks / 2), `${dueTurns} turns of the event loop while ${webhooks} subscriptions were looked at 2 at a time`)
    })
  }
})
