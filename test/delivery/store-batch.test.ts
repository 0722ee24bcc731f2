import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { OpenDb } from '../../src/engine/port.ts'
import type { Claim, DeliveryStore, Job, Outcome } from '../../src/delivery/port.ts'
import { queryRows } from '../helpers/engine.ts'
import type { TestApp } from '../helpers/app.ts'
import { claimedJobs, storeUnderTest } from '../helpers/store.ts'

const OWNER = 'store-batch-test'

/**
 * One cycle records many outcomes at once (on PostgreSQL the successes of a batch go through
 * one statement for all of them, the rest one by one): every case the one-by-one path knows
 * must come out the same, whichever mix of outcomes shares the batch.
 */
describe('delivery store: a batch of outcomes recorded in one cycle', () => {
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
  const at = new Date().toISOString()
  const later = new Date(Date.now() + 3_600_000).toISOString()
  const delivered = (job: Job): Outcome => ({
    job, at, responseCode: 200, durationMs: 7, error: null, responseBody: 'ok', delivered: true, nextRetryAt: null, retries: job.retries,
  })
  const failed = (job: Job): Outcome => ({
    job, at, responseCode: 500, durationMs: 9, error: null, responseBody: 'no', delivered: false, nextRetryAt: later, retries: job.retries + 1,
  })
  interface Row {
    status: string; attempts: number; response_code: number | null; last_attempt_at: string | null; delivered_at: string | null
    due_at: string | null; next_retry_at: string | null; manual: number; locked_by: string | null; locked_until: string | null
  }
  const row = async (id: string) => (await queryRows<Row>(app.dbFile,
    'SELECT status, attempts, response_code, last_attempt_at, delivered_at, due_at, next_retry_at, manual, locked_by, locked_until FROM deliveries WHERE id = ?', id))[0]
  const attempts = (id: string) => queryRows<{ attempt: number; trigger: string; response_code: number | null; duration_ms: number; response_body: string | null }>(
    app.dbFile, 'SELECT attempt, trigger, response_code, duration_ms, response_body FROM delivery_attempts WHERE delivery_id = ? ORDER BY attempt', id)
  const webhook = async (id: string) => (await queryRows<{ active: number; failing_since: string | null }>(app.dbFile,
    'SELECT active, failing_since FROM webhooks WHERE id = ?', id))[0]

  test('successes, a lost lease, a manual retry asked meanwhile, a deactivated subscription, a pruned delivery and failures, all in one cycle', async () => {
    const [a1, a2, lost, manual] = await claimed(4) as [Job, Job, Job, Job]
    const [b1, b2] = await claimed(2) as [Job, Job]
    const [off] = await claimed(1) as [Job]
    const [pruned] = await claimed(1) as [Job]
    // What happened while the attempts were in flight:
    await opened.db.updateTable('webhooks').set({ failing_since: at } as never).where('id', '=', a1.webhook_id).execute()
    await opened.db.updateTable('deliveries').set({ locked_by: 'another-worker' } as never).where('id', '=', lost.id).execute()
    await opened.db.updateTable('deliveries').set({ manual: 1 } as never).where('id', '=', manual.id).execute()
    await opened.db.updateTable('webhooks').set({ active: 0 } as never).where('id', '=', off.webhook_id).execute()
    await opened.db.deleteFrom('deliveries').where('id', '=', pruned.id).execute()

    const { disabled } = await store.cycle([delivered(a1), failed(b1), delivered(a2), delivered(lost), delivered(b2), delivered(manual), delivered(off), delivered(pruned)])
    assert.deepEqual(disabled, [])

    for (const j of [a1, a2]) {
      assert.deepEqual(await row(j.id), {
        status: 'delivered', attempts: 1, response_code: 200, last_attempt_at: at, delivered_at: at, due_at: null, next_retry_at: null, manual: 0, locked_by: null, locked_until: null,
      })
      assert.deepEqual(await attempts(j.id), [{ attempt: 1, trigger: 'auto', response_code: 200, duration_ms: 7, response_body: 'ok' }])
    }
    assert.equal((await webhook(a1.webhook_id))?.failing_since, null, 'a success clears failing_since')
    // Another worker holds the lease now: the attempt and its result are recorded, its lease is left alone.
    const l = await row(lost.id)
    assert.deepEqual([l?.status, l?.attempts, l?.delivered_at, l?.locked_by], ['delivered', 1, at, 'another-worker'])
    assert.equal((await attempts(lost.id)).length, 1)
    // A manual attempt asked for while this one was in flight stays queued, due now.
    const m = await row(manual.id)
    assert.deepEqual([m?.status, m?.attempts, m?.manual, m?.due_at, m?.locked_by], ['delivered', 1, 1, at, null])
    // The subscription was deactivated meanwhile: recorded, nothing queued.
    const o = await row(off.id)
    assert.deepEqual([o?.status, o?.due_at, o?.next_retry_at, o?.manual, o?.locked_by], ['delivered', null, null, 0, null])
    // Pruned meanwhile: nothing recorded, nothing recreated.
    assert.equal(await row(pruned.id), undefined)
    assert.deepEqual(await attempts(pruned.id), [])
    // A subscription with a failure in the batch: each outcome as recorded one by one.
    const f = await row(b1.id)
    assert.deepEqual([f?.status, f?.attempts, f?.response_code, f?.next_retry_at, f?.due_at, f?.locked_by], ['failed', 1, 500, later, later, null])
    assert.equal((await webhook(b1.webhook_id))?.failing_since, null, 'the later success in the batch cleared failing_since again')
    const s = await row(b2.id)
    assert.deepEqual([s?.status, s?.attempts, s?.delivered_at], ['delivered', 1, at])
  })

  test('a second attempt of a delivery gets attempt number 2, in a batch of its own', async () => {
    const [j] = await claimed(1) as [Job]
    await store.cycle([failed(j)])
    await opened.db.updateTable('deliveries').set({ due_at: at } as never).where('id', '=', j.id).execute()
    const claim: Claim = {
      now: new Date().toISOString(), leaseUntil: later, owner: OWNER,
      plan: (queued) => queued.filter((q) => q.webhook_id === j.webhook_id).map((q) => ({ webhook_id: q.webhook_id, limit: 1 })),
    }
    const { jobs: [again] } = await store.cycle([], claim)
    assert.equal(again?.id, j.id)
    assert.equal(again?.payload, j.payload, 'the claim carries the event payload')
    await store.cycle([delivered(again!)])
    assert.deepEqual((await attempts(j.id)).map((x) => [x.attempt, x.response_code]), [[1, 500], [2, 200]])
    const r = await row(j.id)
    assert.deepEqual([r?.status, r?.attempts, r?.due_at, r?.next_retry_at], ['delivered', 2, null, null])
  })
})
