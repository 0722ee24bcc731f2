import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { AdaptiveLimits } from '../../src/delivery/concurrency.ts'
import { FairPlanner } from '../../src/delivery/plan.ts'
import { DEFAULT_SLOTS } from '../../src/delivery/worker.ts'
import { withTx } from '../../src/db/tx.ts'
import { emit } from '../../src/events/emit.ts'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

describe('adaptive concurrency per subscription (issue 15: deliveries that keep pace)', () => {
  test('a fast success at the limit raises it by one up to the maximum; a failure or a slow answer halves it, never below the floor', () => {
    const l = new AdaptiveLimits({ floor: 8, max: 32, fastMs: 1000 })
    assert.equal(l.limit('a'), 8)
    l.observe('a', true, 5, 3) // not using its limit: no reason to grow
    assert.equal(l.limit('a'), 8)
    for (let i = 0; i < 100; i++) l.observe('a', true, 5, l.limit('a'))
    assert.equal(l.limit('a'), 32)
    l.observe('a', false, 5, 32)
    assert.equal(l.limit('a'), 16)
    l.observe('a', true, 1500, 16) // slow: the receiver is loaded
    assert.equal(l.limit('a'), 8)
    assert.equal(l.raised.has('a'), false, 'back at the floor: nothing kept')
    l.observe('b', false, 5, 8)
    assert.equal(l.limit('b'), 8, 'never below the floor')
    assert.equal(l.limit('a') + l.limit('b'), 16)
  })

  test('the planner deals a raised subscription its raised limit, the others the floor, and the tenant cap still holds', () => {
    const p = new FairPlanner({ total: 256, perTenant: 40, perHook: 8, maxPerHook: 32 })
    const now = new Date().toISOString()
    const queued = [
      { webhook_id: 'wh_fast', tenant_id: 'ten_a', due: now, ready: 32 },
      { webhook_id: 'wh_slow', tenant_id: 'ten_a', due: now, ready: 32 },
    ]
    const plan = p.plan(queued, now, { total: 0, byTenant: new Map(), byHook: new Map(), hookLimits: new Map([['wh_fast', 30]]) })
    const dealt = Object.fromEntries(plan.hooks.map((h) => [h.webhook_id, h.limit]))
    assert.deepEqual(dealt, { wh_fast: 30, wh_slow: 8 })
    const capped = p.plan(queued, now, { total: 0, byTenant: new Map(), byHook: new Map(), hookLimits: new Map([['wh_fast', 32], ['wh_slow', 32]]) })
    assert.equal(capped.hooks.reduce((a, h) => a + h.limit, 0), 40, 'the tenant cap')
    assert.ok(DEFAULT_SLOTS.maxPerHook > DEFAULT_SLOTS.perHook && DEFAULT_SLOTS.perTenant >= 2 * DEFAULT_SLOTS.maxPerHook)
  })
})

describe('adaptive concurrency against real receivers', () => {
  let app: TestApp
  let t: TestTenant
  const receivers: Receiver[] = []

  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true, retryBaseMs: 60_000, deliveryTimeoutMs: 5000 })
    t = await app.tenant()
  })
  after(async () => {
    await app.close()
    await Promise.all(receivers.map((r) => r.close()))
  })

  /** A receiver answering `status` after `delayMs`, noting the most requests it ever held at once. */
  const counting = async (status: number, delayMs: number) => {
    let now = 0
    const peak = { max: 0 }
    const rx = await startReceiver({
      respond: async () => {
        now++
        peak.max = Math.max(peak.max, now)
        await new Promise((r) => setTimeout(r, delayMs))
        now--
        return { status }
      },
    })
    receivers.push(rx)
    return { rx, peak }
  }
  const backlog = async (events: number) => {
    const { deps } = app.server
    const ctx = { ...deps, tenantId: t.id, keyId: t.keyId }
    await withTx(deps.db, async (scope) => {
      for (let i = 0; i < events; i++) await emit(scope, ctx, 'customer.created', { id: `cus_${i}` })
    })
  }

  test('a fast, healthy receiver with a backlog gets more than the floor at once, never more than the maximum; a failing one never more than the floor', async () => {
    const fast = await counting(200, 20)
    const failing = await counting(500, 20)
    for (const [rx, events] of [[fast.rx, ['customer.created']], [failing.rx, ['customer.created']]] as const) {
      const r = await t.request('POST', '/v1/webhooks', { body: { url: rx.url, events, secret: 'whsec_0123456789abcdef' } })
      assert.equal(r.status, 201, r.text)
    }
    await backlog(400)
    await fast.rx.waitFor(400, 30_000)
    await failing.rx.waitFor(400, 30_000)
    assert.ok(fast.peak.max > DEFAULT_SLOTS.perHook, `the fast receiver held at most ${fast.peak.max} at once`)
    assert.ok(fast.peak.max <= DEFAULT_SLOTS.maxPerHook, `the fast receiver held ${fast.peak.max} at once`)
    assert.ok(failing.peak.max <= DEFAULT_SLOTS.perHook, `the failing receiver held ${failing.peak.max} at once`)
  })
})
