import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { OpenDb } from '../../src/engine/port.ts'
import type { Claim, DeliveryStore, Job, Outcome } from '../../src/delivery/port.ts'
import { queryRows } from '../helpers/engine.ts'
import type { TestApp } from '../helpers/app.ts'
import { claimedJobs, insertWebhook, storeUnderTest } from '../helpers/store.ts'

const OWNER = 'store-health-test'

/**
 * §11 Endpoint health at the store, on the suite's engine: once a subscription is disabled,
 * no outcome recorded afterwards (an attempt that was in flight when it happened) queues its
 * delivery again. Seen failing in CI: a 500 recorded after the disabling outcome left a
 * next_retry_at on a disabled subscription's delivery.
 */
describe('delivery store: outcomes recorded after a subscription was disabled', () => {
  let app: TestApp
  let opened: OpenDb
  let store: DeliveryStore
  let tenantId: string
  let keyId: string
  let close: () => Promise<void>
  before(async () => {
    ;({ app, opened, store, tenantId, keyId, close } = await storeUnderTest())
  })
  after(() => close?.())

  const claimed = (n: number) => claimedJobs(opened, store, { tenantId, keyId }, OWNER, n)
  const failed = (job: Job, responseCode: number): Outcome => ({
    job, at: new Date().toISOString(), responseCode, durationMs: 1, error: null, responseBody: null, delivered: false,
    nextRetryAt: new Date(Date.now() + 3_600_000).toISOString(), retries: job.retries + 1,
  })
  const queued = (webhookId: string) =>
    queryRows<{ id: string; next_retry_at: string | null; due_at: string | null }>(app.dbFile,
      'SELECT id, next_retry_at, due_at FROM deliveries WHERE webhook_id = ? AND (next_retry_at IS NOT NULL OR due_at IS NOT NULL)', webhookId)

  test('in the same cycle: a 410 disables it; a 500 recorded after it queues nothing', async () => {
    const [a, b] = await claimed(2) as [Job, Job]
    const { disabled } = await store.cycle([failed(a, 410), failed(b, 500)])
    assert.deepEqual(disabled.map((d) => [d.webhook_id, d.reason]), [[a.webhook_id, 'gone']])
    assert.deepEqual(await queued(a.webhook_id), [])
    const attempts = await queryRows<{ n: number }>(app.dbFile, 'SELECT count(*) AS n FROM delivery_attempts WHERE delivery_id = ?', b.id)
    assert.equal(Number(attempts[0]?.n), 1, 'the attempt itself is recorded')
  })

  test('in a later cycle: an attempt in flight while the subscription was disabled queues nothing either', async () => {
    const [a, b, c] = await claimed(3) as [Job, Job, Job]
    await store.cycle([failed(a, 410)])
    const { disabled } = await store.cycle([failed(b, 500), { ...failed(c, 200), delivered: true, nextRetryAt: null }])
    assert.deepEqual(disabled, [])
    assert.deepEqual(await queued(a.webhook_id), [])
    const [row] = await queryRows<{ status: string }>(app.dbFile, 'SELECT status FROM deliveries WHERE id = ?', c.id)
    assert.equal(row?.status, 'delivered', 'a success is still recorded as one')
  })

  test('a disabling writes webhook.disabled in its transaction, and the claim of the same cycle takes its delivery', async () => {
    const [a] = await claimed(1) as [Job]
    const told = await insertWebhook(opened.db, tenantId, { events: '["webhook.disabled"]' })
    const claim: Claim = {
      now: new Date(Date.now() + 1000).toISOString(), leaseUntil: new Date(Date.now() + 60_000).toISOString(), owner: OWNER,
      plan: (queued) => queued.filter((q) => q.webhook_id === told).map((q) => ({ webhook_id: q.webhook_id, limit: 8 })),
    }
    const { disabled, jobs } = await store.cycle([failed(a, 410)], claim)
    assert.deepEqual(disabled.map((d) => [d.webhook_id, d.reason]), [[a.webhook_id, 'gone']])
    assert.deepEqual(jobs.map((j) => [j.webhook_id, j.event, j.event_id]), [[told, 'webhook.disabled', disabled[0]!.event_id]])
    const event = JSON.parse(jobs[0]!.payload)
    assert.deepEqual([event.event, event.tenant_id, event.data.id, event.data.active, event.data.disabled_reason], ['webhook.disabled', tenantId, a.webhook_id, false, 'gone'])
    assert.equal(event.timestamp, event.data.disabled_at)
  })
})
