import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { PACE_AFTER_FAILURES } from '../../../src/delivery/concurrency.ts'
import type { QueuedWebhook } from '../../../src/delivery/port.ts'
import { createSlots } from '../../../src/delivery/worker/slots.ts'
import { job } from '../../helpers/fake-delivery-store.ts'

// The worker's slot accounting alone (src/delivery/worker/slots.ts): no store, no timers. A
// pause is placed with an explicit time, so nothing depends on how long the test takes.

const NOW = '2026-11-29T08:00:00.000Z'
const limits = { total: 4, perTenant: 3, perWebhook: 2, maxPerWebhook: 4 }
const due = (tenant: string, webhook: string, ready: number): QueuedWebhook => ({ webhook_id: webhook, tenant_id: tenant, due: NOW, ready })
/** Enough failures in a row to pace `webhook`, the last one ended at `at` (performance.now()). */
const pace = (slots: ReturnType<typeof createSlots>, tenant: string, webhook: string, at: number) => {
  let change
  for (let i = 0; i < PACE_AFTER_FAILURES; i++) change = slots.observe(job(tenant, webhook), false, 5, 1, at) ?? change
  return change
}

describe('slots', () => {
  test('an attempt holds its slot from its start until its answer, by tenant and subscription', () => {
    const slots = createSlots(limits)
    const a = job('ten_a', 'wh_1')
    const b = job('ten_a', 'wh_1')
    slots.count(a, 1)
    slots.count(b, 1)
    assert.equal(slots.sending, 2)
    assert.equal(slots.byWebhook.get('wh_1'), 2)
    assert.deepEqual(slots.plan([due('ten_a', 'wh_1', 5)], NOW).webhooks, [], 'wh_1 is at its limit of 2')
    slots.count(a, -1)
    assert.equal(slots.sending, 1)
    assert.deepEqual(slots.plan([due('ten_a', 'wh_1', 5)], NOW).webhooks, [{ webhook_id: 'wh_1', limit: 1 }])
    slots.count(b, -1)
    assert.equal(slots.byWebhook.has('wh_1'), false, 'a subscription with nothing in flight is forgotten')
  })

  test('a claim\'s plan reserves what it dealt until release(); a second plan in the same claim replaces the first', () => {
    const slots = createSlots(limits)
    const dealt: number[] = []
    const c = slots.claim({ now: new Date(NOW), leaseUntil: NOW, owner: 'wrk_x' }, (p) => dealt.push(p.webhooks.length))
    assert.deepEqual(c.claim.plan([due('ten_a', 'wh_1', 2), due('ten_b', 'wh_2', 2)], NOW), [{ webhook_id: 'wh_1', limit: 2 }, { webhook_id: 'wh_2', limit: 2 }])
    assert.equal(slots.byWebhook.get('wh_1'), 2)
    // A claim beside it sees those slots as taken: the process-wide total of 4 is reached.
    assert.deepEqual(slots.plan([due('ten_c', 'wh_3', 1)], NOW).webhooks, [])
    assert.equal(slots.behind, true, 'due work left with no process-wide slot: behind')
    // SQLite plans again under its write lock: the first reservation is given back first.
    assert.deepEqual(c.claim.plan([due('ten_a', 'wh_1', 1)], NOW), [{ webhook_id: 'wh_1', limit: 1 }])
    assert.equal(slots.byWebhook.get('wh_1'), 1)
    assert.equal(slots.byWebhook.has('wh_2'), false)
    c.release()
    assert.equal(slots.byWebhook.size, 0)
    assert.equal(slots.sending, 0, 'a reservation is not an attempt')
    assert.deepEqual(dealt, [2, 1])
  })

  test('lease() skips a subscription at its limit; a tenant marked full is so until one of its attempts ends', () => {
    const slots = createSlots(limits)
    const a = job('ten_a', 'wh_1')
    slots.count(a, 1)
    assert.equal(slots.blocked('ten_a'), undefined, 'one of two slots in use')
    slots.count(job('ten_a', 'wh_1'), 1)
    assert.deepEqual(slots.blocked('ten_a'), ['wh_1'])
    assert.equal(slots.blocked('ten_b'), undefined)
    slots.markFull('ten_a')
    assert.equal(slots.isFull('ten_a'), true)
    slots.count(a, -1)
    assert.equal(slots.isFull('ten_a'), false)
    assert.equal(slots.blocked('ten_a'), undefined)
  })

  test('a paced subscription is skipped during its pause with nothing in flight, and no longer once it recovered', () => {
    const slots = createSlots(limits)
    assert.equal(pace(slots, 'ten_a', 'wh_1', performance.now() + 60_000), 'paced')
    assert.equal(slots.limits.limit('wh_1'), 1)
    assert.deepEqual(slots.blocked('ten_a'), ['wh_1'])
    // In flight, it is skipped for being at its limit of one, not twice.
    const a = job('ten_a', 'wh_1')
    slots.count(a, 1)
    assert.deepEqual(slots.blocked('ten_a'), ['wh_1'])
    slots.count(a, -1)
    assert.equal(slots.observe(a, true, 5, 1), 'recovered')
    assert.equal(slots.blocked('ten_a'), undefined)
  })

  test('a paced subscription whose pause has ended is not skipped', () => {
    const slots = createSlots(limits)
    assert.equal(pace(slots, 'ten_a', 'wh_1', performance.now() - 60_000), 'paced')
    assert.equal(slots.blocked('ten_a'), undefined)
  })

  test('the planner deals round-robin across tenants, within the per-tenant limit', () => {
    const slots = createSlots({ ...limits, total: 8 })
    const p = slots.plan([due('ten_a', 'wh_1', 5), due('ten_a', 'wh_2', 5), due('ten_b', 'wh_3', 1)], NOW)
    const by = Object.fromEntries(p.webhooks.map((h) => [h.webhook_id, h.limit]))
    assert.deepEqual(by, { wh_1: 2, wh_2: 1, wh_3: 1 }, 'ten_a holds 3 (perTenant), ten_b its one')
    assert.equal(p.left, true)
    assert.equal(slots.behind, false, 'limits, not the process-wide slots, left work')
  })
})
