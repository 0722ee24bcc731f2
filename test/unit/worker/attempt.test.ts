import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { PACE_AFTER_FAILURES } from '../../../src/delivery/concurrency.ts'
import type { Outcome } from '../../../src/delivery/port.ts'
import { verifySignature, verifyStandardSignature } from '../../../src/delivery/sign.ts'
import { BACKSTOP_MS, createAttempts, outcomeOf, request } from '../../../src/delivery/worker/attempt.ts'
import { FakeSender, FakeStore, fakeCore, job } from '../../helpers/fake-delivery-store.ts'

// One attempt (src/delivery/worker/attempt.ts) with a sender whose answers the test gives: what
// it sends, when its slot is free, what it hands to the cycle, and the backstop with a time the
// test passes in.

const NOW = new Date('2026-11-29T08:00:00.000Z')
const turn = () => new Promise<void>((r) => setImmediate(r))

function setup() {
  const core = fakeCore(new FakeStore())
  const sender = new FakeSender()
  const recorded: Outcome[] = []
  const settle: (() => void)[] = []
  const shutdown = new AbortController()
  const attempts = createAttempts(core, { clock: core.clock, logger: core.logger, sender, userAgent: 'travelops/test', retryBaseMs: 60_000, timeoutMs: 2000, random: () => 0.5 },
    shutdown.signal, (o) => {
      recorded.push(o)
      return new Promise((r) => settle.push(r))
    })
  return { core, sender, recorded, settle, attempts, shutdown }
}

describe('one attempt', () => {
  test('the request carries the stored body, the custom headers and both signatures of this attempt', () => {
    const j = job('ten_a', 'wh_1', { headers: { 'X-Trip': 'T-1' }, secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=' })
    const req = request(j, 'travelops/test', NOW)
    assert.equal(req.key, 'wh_1')
    assert.equal(req.body, j.payload)
    assert.equal(req.headers['X-Trip'], 'T-1')
    assert.equal(req.headers['User-Agent'], 'travelops/test')
    assert.equal(req.headers['X-Webhook-ID'], j.event_id)
    assert.equal(req.headers['X-Webhook-Timestamp'], j.eventAt)
    assert.equal(req.headers['webhook-timestamp'], String(NOW.getTime() / 1000))
    assert.ok(verifySignature(j.secret, j.payload, req.headers['X-Webhook-Signature']!))
    assert.ok(verifyStandardSignature(j.secret, j.event_id, NOW.getTime() / 1000, j.payload, req.headers['webhook-signature']!))
  })

  test('the outcome: 2xx delivered; a failure scheduled for retry; a manual failure leaves the schedule as it was', () => {
    const o = { clock: { now: () => NOW }, retryBaseMs: 60_000, random: () => 0.5 }
    const ok = outcomeOf(job('ten_a', 'wh_1'), NOW, { responseCode: 204, durationMs: 3, error: null, responseBody: null }, o)
    assert.equal(ok.delivered, true)
    assert.equal(ok.nextRetryAt, null)
    const failed = outcomeOf(job('ten_a', 'wh_1', { eventAt: NOW.toISOString() }), NOW, { responseCode: 500, durationMs: 3, error: null, responseBody: 'no', retryAfter: '1' }, o)
    assert.equal(failed.delivered, false)
    assert.equal(failed.retries, 1)
    assert.equal(failed.nextRetryAt, new Date(NOW.getTime() + 60_000).toISOString(), 'base × 10^0, the jitter at its middle')
    assert.equal('retryAfter' in failed, false, 'not a column')
    const manual = outcomeOf(job('ten_a', 'wh_1', { manual: 1, next_retry_at: '2026-11-30T00:00:00.000Z' }), NOW, { responseCode: null, durationMs: 3, error: 'refused', responseBody: null }, o)
    assert.deepEqual([manual.delivered, manual.retries, manual.nextRetryAt], [false, 0, '2026-11-30T00:00:00.000Z'])
  })

  test('a slot is free once the answer is in, before it is recorded; the attempt runs until it is recorded', async () => {
    const { core, sender, recorded, settle, attempts } = setup()
    const j = job('ten_a', 'wh_1')
    attempts.start(j)
    assert.equal(core.slots.sending, 1)
    assert.equal(core.running.has(j.id), true)
    assert.equal(sender.sent.length, 1)
    sender.answer(0, { responseCode: 200 })
    await turn()
    assert.equal(core.slots.sending, 0)
    assert.equal(core.slots.byWebhook.size, 0)
    assert.equal(recorded.length, 1)
    assert.equal(recorded[0]!.delivered, true)
    assert.equal(core.running.has(j.id), true, 'still running while its answer is recorded')
    const done = core.running.get(j.id)!.done
    settle[0]!()
    await done
    assert.equal(core.running.has(j.id), false)
  })

  test('failures in a row pace the subscription; a success ends it and asks for a read', async () => {
    const { core, sender, settle, attempts } = setup()
    core.reads.begin(false, false, false) // the read at start is done
    for (let i = 0; i < PACE_AFTER_FAILURES; i++) {
      attempts.start(job('ten_a', 'wh_1'))
      sender.answer(i, { responseCode: 503 })
      await turn()
    }
    assert.equal(core.slots.limits.limit('wh_1'), 1)
    assert.equal(core.reads.begin(false, false, false), false, 'failures read the queue through their cycle, not here')
    attempts.start(job('ten_a', 'wh_1'))
    sender.answer(PACE_AFTER_FAILURES, { responseCode: 200 })
    await turn()
    assert.equal(core.slots.limits.paced.has('wh_1'), false)
    assert.equal(core.reads.begin(false, false, false), true, 'work written unleased meanwhile is read')
    for (const s of settle) s()
  })

  test('an attempt aborted by shutdown before any answer records nothing', async () => {
    const { core, recorded, attempts, shutdown } = setup()
    const j = job('ten_a', 'wh_1')
    attempts.start(j)
    shutdown.abort()
    await core.running.get(j.id)!.done
    assert.deepEqual(recorded, [])
    assert.equal(core.slots.sending, 0)
  })

  test('the backstop ends an attempt without an answer past the deadline and its margin, and drops its connections', async () => {
    const { core, sender, recorded, attempts } = setup()
    const j = job('ten_a', 'wh_1')
    attempts.start(j)
    const at = core.running.get(j.id)!.at
    attempts.sweep(at + 2000 + BACKSTOP_MS - 1)
    assert.deepEqual(sender.resets, [])
    attempts.sweep(at + 2000 + BACKSTOP_MS)
    assert.deepEqual(sender.resets, ['wh_1'])
    await turn()
    assert.equal(recorded.length, 1)
    assert.equal(recorded[0]!.error, 'timeout after 2000 ms')
    assert.equal(recorded[0]!.responseCode, null)
    sender.answer(0, { responseCode: 200 }) // too late: the attempt has ended
    attempts.sweep(at + 10_000)
    assert.deepEqual(sender.resets, ['wh_1'], 'an attempt whose answer is in is not swept')
  })
})
