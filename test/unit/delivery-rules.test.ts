import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { EVENT_NAMES } from '../../src/events/catalog.ts'
import { attemptTrigger, decideAttempt, isDelivered } from '../../src/delivery/rules/attempt.ts'
import { receives, wantsEvent } from '../../src/delivery/rules/fan-out.ts'
import { endpointHealth } from '../../src/delivery/rules/health.ts'
import { afterAttempt, claimedBy, dropQueued, isClaimable, queuedSummary, type QueueState, type Recorded } from '../../src/delivery/rules/queue-state.ts'

// The delivery rules (src/delivery/rules/) alone, no database: CONTRACT §7, §8, §11.
// test/db/delivery-rules-agree.test.ts checks the stores' SQL against the same functions.

const T0 = '2026-01-01T00:00:00.000Z'
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString()
const MIN = 60_000
const HOUR = 60 * MIN

describe('decideAttempt: what one attempt decided', () => {
  const job = { retries: 0, manual: 0, retryCount: 3, eventAt: T0, next_retry_at: null }
  const s = (ms: number) => ({ now: new Date(at(ms)), baseMs: MIN, random: () => 0.5 })

  it('a 2xx is delivered, schedules nothing and counts no retry', () => {
    for (const code of [200, 204, 299]) assert.deepEqual(decideAttempt({ ...job, retries: 2 }, { responseCode: code }, s(0)), { delivered: true, nextRetryAt: null, retries: 2 })
  })

  it('any other answer, or none, is a failure that schedules retry n after base × 10^(n-1)', () => {
    for (const code of [null, 199, 300, 404, 410, 500]) {
      assert.deepEqual(decideAttempt(job, { responseCode: code }, s(0)), { delivered: false, nextRetryAt: at(MIN), retries: 1 }, String(code))
    }
    assert.deepEqual(decideAttempt({ ...job, retries: 2 }, { responseCode: 500 }, s(0)), { delivered: false, nextRetryAt: at(100 * MIN), retries: 3 })
  })

  it('the retries spent, a failure schedules nothing and counts nothing more', () => {
    assert.deepEqual(decideAttempt({ ...job, retries: 3 }, { responseCode: 500 }, s(0)), { delivered: false, nextRetryAt: null, retries: 3 })
    assert.deepEqual(decideAttempt({ ...job, retryCount: 0 }, { responseCode: 500 }, s(0)), { delivered: false, nextRetryAt: null, retries: 0 })
  })

  it('no retry past 24 h after the event', () => {
    assert.deepEqual(decideAttempt({ ...job, retries: 2 }, { responseCode: 500 }, s(23 * HOUR)), { delivered: false, nextRetryAt: null, retries: 2 })
  })

  it('a Retry-After pushes the retry back, still within 24 h of the event', () => {
    assert.deepEqual(decideAttempt(job, { responseCode: 429, retryAfter: '600' }, s(0)), { delivered: false, nextRetryAt: at(10 * MIN), retries: 1 })
    assert.deepEqual(decideAttempt(job, { responseCode: 503, retryAfter: '30' }, s(0)), { delivered: false, nextRetryAt: at(MIN), retries: 1 }, 'never earlier than the schedule')
    assert.deepEqual(decideAttempt(job, { responseCode: 503, retryAfter: String(25 * 3600) }, s(0)), { delivered: false, nextRetryAt: null, retries: 0 })
  })

  it('a manual attempt that fails leaves the automatic schedule and its count as they were', () => {
    const manual = { ...job, manual: 1, retries: 1, next_retry_at: at(10 * MIN) }
    assert.deepEqual(decideAttempt(manual, { responseCode: 500 }, s(0)), { delivered: false, nextRetryAt: at(10 * MIN), retries: 1 })
    assert.deepEqual(decideAttempt({ ...manual, next_retry_at: null }, { responseCode: null }, s(0)), { delivered: false, nextRetryAt: null, retries: 1 })
    assert.deepEqual(decideAttempt(manual, { responseCode: 201 }, s(0)), { delivered: true, nextRetryAt: null, retries: 1 })
  })

  it('delivered exactly for 2xx; the trigger is manual exactly when manual retries were claimed', () => {
    fc.assert(fc.property(fc.option(fc.integer({ min: 100, max: 599 }), { nil: null }), (code) => {
      assert.equal(isDelivered(code), code !== null && code >= 200 && code <= 299)
    }))
    assert.deepEqual([0, 1, 3].map((manual) => attemptTrigger({ manual })), ['auto', 'manual', 'manual'])
  })
})

describe('afterAttempt: the queue state after an attempt is recorded', () => {
  const OWNER = 'wrk_a'
  const row: QueueState = {
    status: 'pending', attempts: 0, retries: 0, manual: 0, next_retry_at: null, due_at: T0, delivered_at: null,
    response_code: null, last_attempt_at: null, locked_by: OWNER, locked_until: at(15_000),
  }
  const failed = (over: Partial<Recorded> = {}): Recorded => ({ at: at(1000), responseCode: 500, delivered: false, nextRetryAt: at(MIN), retries: 1, job: { manual: 0, owner: OWNER }, ...over })
  const delivered = (over: Partial<Recorded> = {}): Recorded => failed({ responseCode: 200, delivered: true, nextRetryAt: null, retries: 0, ...over })

  it('held, delivered: delivered, the lease ended, nothing queued', () => {
    assert.deepEqual(afterAttempt(row, delivered(), true), {
      ...row, status: 'delivered', delivered_at: at(1000), attempts: 1, response_code: 200, last_attempt_at: at(1000),
      due_at: null, next_retry_at: null, locked_by: null, locked_until: null,
    })
  })

  it('held, failed with a retry: failed, due at the retry, which is shown as next_retry_at', () => {
    assert.deepEqual(afterAttempt(row, failed(), true), {
      ...row, status: 'failed', attempts: 1, retries: 1, response_code: 500, last_attempt_at: at(1000),
      due_at: at(MIN), next_retry_at: at(MIN), locked_by: null, locked_until: null,
    })
  })

  it('held, failed for good: failed, not queued; a delivered record retried by hand and failing again ends failed', () => {
    const after = afterAttempt({ ...row, status: 'delivered', delivered_at: T0, manual: 1 }, failed({ nextRetryAt: null, retries: 0, job: { manual: 1, owner: OWNER } }), true)
    assert.equal(after.status, 'failed')
    assert.equal(after.delivered_at, T0, 'when it was delivered stays on the record')
    assert.deepEqual([after.due_at, after.next_retry_at, after.manual], [null, null, 0])
  })

  it('a manual retry asked for while the attempt was in flight keeps it due at once, whatever the answer', () => {
    for (const o of [delivered({ job: { manual: 1, owner: OWNER } }), failed({ job: { manual: 1, owner: OWNER } })]) {
      const after = afterAttempt({ ...row, manual: 2 }, o, true)
      assert.deepEqual([after.due_at, after.manual], [at(1000), 1])
    }
    assert.deepEqual(afterAttempt({ ...row, manual: 1 }, failed({ job: { manual: 1, owner: OWNER } }), true).due_at, at(MIN), 'served: due at the schedule')
  })

  it('a subscription no longer active gets nothing queued, manual retries included', () => {
    const after = afterAttempt({ ...row, manual: 2 }, failed(), false)
    assert.deepEqual([after.status, after.due_at, after.next_retry_at, after.manual, after.locked_by, after.retries], ['failed', null, null, 0, null, 1])
  })

  it('lease lost: the attempt counts and a success marks it delivered; the queue state is the new holder\'s', () => {
    const theirs = { ...row, locked_by: 'wrk_b', manual: 1, due_at: at(5000) }
    assert.deepEqual(afterAttempt(theirs, failed(), true), { ...theirs, attempts: 1, last_attempt_at: at(1000), response_code: 500 })
    assert.deepEqual(afterAttempt(theirs, delivered(), false), { ...theirs, attempts: 1, last_attempt_at: at(1000), response_code: 200, status: 'delivered', delivered_at: at(1000) })
    const freed = { ...row, locked_by: null, locked_until: null }
    assert.equal(afterAttempt(freed, failed(), true).status, 'pending', 'a lease released meanwhile is lost too')
  })
})

describe('dropQueued: a queued delivery of a subscription no longer active', () => {
  const row: QueueState = {
    status: 'pending', attempts: 0, retries: 0, manual: 1, next_retry_at: at(MIN), due_at: T0, delivered_at: null,
    response_code: null, last_attempt_at: null, locked_by: 'wrk_a', locked_until: at(15_000),
  }
  it('is unscheduled, never-attempted ends failed, its lease is left to its holder', () => {
    assert.deepEqual(dropQueued(row), { ...row, due_at: null, next_retry_at: null, manual: 0, status: 'failed' })
    assert.equal(dropQueued({ ...row, status: 'delivered' }).status, 'delivered')
  })
  it('one not queued is left as it is', () => {
    const done = { ...row, due_at: null, status: 'pending' as const }
    assert.equal(dropQueued(done), done)
  })
})

describe('isClaimable and claimedBy: what a claim takes, and what it does with it', () => {
  const row: QueueState = {
    status: 'failed', attempts: 1, retries: 1, manual: 0, next_retry_at: at(MIN), due_at: at(MIN), delivered_at: null,
    response_code: 500, last_attempt_at: T0, locked_by: null, locked_until: null,
  }
  it('a queued delivery is claimable from its due time on, unless a lease still runs', () => {
    assert.equal(isClaimable(row, at(MIN - 1)), false)
    assert.equal(isClaimable(row, at(MIN)), true)
    assert.equal(isClaimable({ ...row, due_at: null }, at(HOUR)), false)
    assert.equal(isClaimable({ ...row, locked_by: 'wrk_b', locked_until: at(2 * MIN) }, at(2 * MIN)), false, 'a lease runs to its end')
    assert.equal(isClaimable({ ...row, locked_by: 'wrk_b', locked_until: at(2 * MIN) }, at(2 * MIN + 1)), true, 'an expired lease is anybody\'s')
  })
  it('an active subscription\'s is leased; an inactive one\'s is dropped, its expired lease cleared', () => {
    const expired = { ...row, status: 'pending' as const, locked_by: 'wrk_b', locked_until: T0 }
    assert.deepEqual(claimedBy(expired, 'wrk_a', at(HOUR), true), { ...expired, locked_by: 'wrk_a', locked_until: at(HOUR) })
    assert.deepEqual(claimedBy(expired, 'wrk_a', at(HOUR), false), { ...expired, status: 'failed', due_at: null, next_retry_at: null, manual: 0, locked_by: null, locked_until: null })
  })
})

describe('queuedSummary: what a queue read reports of a subscription', () => {
  const q = (due: number | null, lockedUntil: number | null = null): QueueState => ({
    status: 'failed', attempts: 1, retries: 1, manual: 0, next_retry_at: null, due_at: due === null ? null : at(due), delivered_at: null,
    response_code: 500, last_attempt_at: T0, locked_by: lockedUntil === null ? null : 'wrk_b', locked_until: lockedUntil === null ? null : at(lockedUntil),
  })
  it('the earliest due time under no running lease, and how many are claimable now', () => {
    assert.deepEqual(queuedSummary([q(5 * MIN), q(2 * MIN), q(MIN, 2 * HOUR), q(null)], at(3 * MIN), 32), { due: at(2 * MIN), ready: 1 })
    assert.deepEqual(queuedSummary([q(MIN, 2 * HOUR)], at(3 * MIN), 32), { due: null, ready: 0 }, 'every one leased')
    assert.deepEqual(queuedSummary([q(MIN, 2 * MIN)], at(3 * MIN), 32), { due: at(MIN), ready: 1 }, 'an expired lease counts as none')
  })
  it('counts ready ones up to the cap', () => {
    assert.deepEqual(queuedSummary(Array.from({ length: 40 }, (_, i) => q(i)), at(HOUR), 32), { due: T0, ready: 32 })
  })
})

describe('endpointHealth: the verdict after one recorded attempt', () => {
  const DAY = 24 * HOUR
  const fail = (ms: number, code: number | null = 500) => ({ delivered: false, responseCode: code, at: at(ms) })
  const active = { active: true, failingSince: null }

  it('a success clears the failing run, even of an inactive subscription', () => {
    assert.deepEqual(endpointHealth({ active: false, failingSince: T0 }, { delivered: true, responseCode: 200, at: at(1) }, DAY), { failingSince: null })
  })

  it('a first failure starts the run; the run keeps its start', () => {
    assert.deepEqual(endpointHealth(active, fail(1000), DAY), { failingSince: at(1000) })
    assert.deepEqual(endpointHealth({ active: true, failingSince: T0 }, fail(HOUR), DAY), { failingSince: T0 })
  })

  it('410 Gone disables at once, even the run\'s first failure, even with disableAfterMs 0', () => {
    assert.deepEqual(endpointHealth(active, fail(1000, 410), 0), { failingSince: at(1000), disable: 'gone' })
  })

  it('failing for at least disableAfterMs disables (failing); a moment less does not', () => {
    const since = { active: true, failingSince: T0 }
    assert.deepEqual(endpointHealth(since, fail(DAY), DAY), { failingSince: T0, disable: 'failing' })
    assert.deepEqual(endpointHealth(since, fail(DAY - 1), DAY), { failingSince: T0 })
  })

  it('disableAfterMs 0 never disables for failing', () => {
    assert.deepEqual(endpointHealth({ active: true, failingSince: T0 }, fail(365 * DAY), 0), { failingSince: T0 })
  })

  it('an inactive subscription is never disabled again, but its failures still start the run', () => {
    assert.deepEqual(endpointHealth({ active: false, failingSince: null }, fail(5, 410), DAY), { failingSince: at(5) })
  })

  it('disables only on failures, and only active subscriptions (property)', () => {
    fc.assert(fc.property(fc.boolean(), fc.boolean(), fc.option(fc.integer({ min: 0, max: 10 * DAY }), { nil: null }), fc.integer({ min: 0, max: 10 * DAY }),
      fc.constantFrom(null, 200, 410, 429, 500), fc.integer({ min: 0, max: 5 * DAY }), (isActive, ok, since, now, code, after) => {
        const v = endpointHealth({ active: isActive, failingSince: since === null ? null : at(since) }, { delivered: ok, responseCode: code, at: at(now) }, after)
        if (v.disable) assert.ok(isActive && !ok)
        if (!ok) assert.equal(v.failingSince, since === null ? at(now) : at(since))
        if (isActive && !ok && code === 410) assert.equal(v.disable, 'gone')
      }))
  })
})

describe('fan-out matching', () => {
  const webhook = (events: unknown, over: { active?: number; deleted_at?: string | null } = {}) =>
    ({ active: 1, deleted_at: null, events: typeof events === 'string' ? events : JSON.stringify(events), ...over })

  it('an active subscription receives the events it names, or all of them with *', () => {
    assert.equal(receives(webhook(['order.created']), 'order.created'), true)
    assert.equal(receives(webhook(['order.created']), 'order.updated'), false)
    for (const name of EVENT_NAMES) assert.equal(receives(webhook(['*']), name), true, name)
    assert.equal(receives(webhook(['invoice.paid', '*']), 'payment.received'), true)
  })

  it('an inactive or deleted subscription receives nothing', () => {
    assert.equal(receives(webhook(['*'], { active: 0 }), 'order.created'), false)
    assert.equal(receives(webhook(['*'], { deleted_at: T0 }), 'order.created'), false)
  })

  it('a stored events column that is not a JSON array of names matches nothing', () => {
    for (const stored of ['', 'not json', '"*"', '{"order.created":true}', 'null', '[]']) assert.equal(wantsEvent(stored, 'order.created'), false, stored)
    assert.equal(wantsEvent('["order"]', 'order.created'), false, 'names match whole')
  })
})
