import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { AdaptiveLimits, PACE_AFTER_FAILURES, PACE_MS } from '../../src/delivery/concurrency.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { newId } from '../../src/lib/ids.ts'
import { sql } from 'kysely'
import { oldIdSql, series } from '../helpers/seed-sql.ts'
import { FairPlanner } from '../../src/delivery/plan.ts'
import { DEFAULT_SLOTS } from '../../src/delivery/worker.ts'
import { withTx } from '../../src/engine/tx.ts'
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
    const p = new FairPlanner({ total: 256, perTenant: 40, perWebhook: 8, maxPerWebhook: 32 })
    const now = new Date().toISOString()
    const queued = [
      { webhook_id: 'wh_fast', tenant_id: 'ten_a', due: now, ready: 32 },
      { webhook_id: 'wh_slow', tenant_id: 'ten_a', due: now, ready: 32 },
    ]
    const plan = p.plan(queued, now, { total: 0, byTenant: new Map(), byWebhook: new Map(), webhookLimits: new Map([['wh_fast', 30]]) })
    const dealt = Object.fromEntries(plan.webhooks.map((h) => [h.webhook_id, h.limit]))
    assert.deepEqual(dealt, { wh_fast: 30, wh_slow: 8 })
    const capped = p.plan(queued, now, { total: 0, byTenant: new Map(), byWebhook: new Map(), webhookLimits: new Map([['wh_fast', 32], ['wh_slow', 32]]) })
    assert.equal(capped.webhooks.reduce((a, h) => a + h.limit, 0), 40, 'the tenant cap')
    assert.ok(DEFAULT_SLOTS.maxPerWebhook > DEFAULT_SLOTS.perWebhook && DEFAULT_SLOTS.perTenant >= 2 * DEFAULT_SLOTS.maxPerWebhook)
  })

  test('a subscription whose last attempts all failed is paced: one at a time, none before its pause ends; a success ends it', () => {
    const l = new AdaptiveLimits({ floor: 8, max: 32, fastMs: 1000, failAfter: 4, pauseMs: 1000 })
    for (let i = 0; i < 3; i++) assert.equal(l.observe('a', false, 5, 8, 100), undefined)
    assert.equal(l.limit('a'), 8)
    assert.equal(l.paced.has('a'), false, 'not before the fourth failure in a row')
    assert.equal(l.observe('a', false, 5, 8, 200), 'paced')
    assert.equal(l.limit('a'), 1)
    assert.equal(l.paced.get('a'), 1200, 'the pause counts from the end of the last attempt')
    assert.equal(l.observe('a', false, 5, 1, 1300), undefined, 'still paced: said once')
    assert.equal(l.paced.get('a'), 2300)
    // A success anywhere in the run starts the count again.
    for (const ok of [false, false, false, true, false, false, false]) l.observe('b', ok, 5, 8, 100)
    assert.equal(l.paced.has('b'), false)
    assert.equal(l.observe('a', true, 5, 1, 2400), 'recovered')
    assert.equal(l.limit('a'), 8, 'back at the floor')
    assert.equal(l.paced.has('a'), false)
    assert.equal(l.observe('a', false, 5, 8, 2500), undefined, 'a new run of failures starts from nothing')
    assert.ok(PACE_AFTER_FAILURES > DEFAULT_SLOTS.perWebhook && PACE_MS >= 50)
  })

  test('the planner gives a paced subscription one slot once its pause has ended and none before; its waiting work is not left over', () => {
    const p = new FairPlanner(DEFAULT_SLOTS)
    const now = new Date().toISOString()
    const queued = [
      { webhook_id: 'wh_paced', tenant_id: 'ten_a', due: now, ready: 50 },
      { webhook_id: 'wh_ok', tenant_id: 'ten_a', due: now, ready: 3 },
    ]
    const paced = new Map([['wh_paced', 1500]])
    const dealt = (plan: { webhooks: { webhook_id: string; limit: number }[] }) => Object.fromEntries(plan.webhooks.map((h) => [h.webhook_id, h.limit]))
    const pausing = p.plan(queued, now, { total: 0, byTenant: new Map(), byWebhook: new Map(), paced, clockMs: 1000 })
    assert.deepEqual(dealt(pausing), { wh_ok: 3 })
    assert.equal(pausing.nextDueMs, 500, 'the queue is looked at again when the pause ends')
    assert.equal(pausing.left, false, 'nothing left over that more slots could take now')
    const ended = p.plan(queued, now, { total: 0, byTenant: new Map(), byWebhook: new Map(), paced, clockMs: 1600 })
    assert.deepEqual(dealt(ended), { wh_ok: 3, wh_paced: 1 })
    assert.equal(ended.left, true)
    const busy = p.plan(queued, now, { total: 1, byTenant: new Map([['ten_a', 1]]), byWebhook: new Map([['wh_paced', 1]]), paced, clockMs: 1600 })
    assert.deepEqual(dealt(busy), { wh_ok: 3 }, 'its one attempt is in flight')
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
    await withTx(deps.engine, async (scope) => {
      for (let i = 0; i < events; i++) await emit(scope, ctx, 'customer.created', { id: `cus_${i}` })
    })
  }

  test('a fast, healthy receiver with a backlog gets more than the floor at once, never more than the maximum; a failing one never more than the floor (then it is paced)', async () => {
    const fast = await counting(200, 20)
    const failing = await counting(500, 20)
    for (const [rx, events] of [[fast.rx, ['customer.created']], [failing.rx, ['customer.created']]] as const) {
      const r = await t.request('POST', '/v1/webhooks', { body: { url: rx.url, events, secret: 'whsec_0123456789abcdef' } })
      assert.equal(r.status, 201, r.text)
    }
    await backlog(400)
    await fast.rx.waitFor(400, 30_000)
    await failing.rx.waitFor(PACE_AFTER_FAILURES, 30_000)
    assert.ok(fast.peak.max > DEFAULT_SLOTS.perWebhook, `the fast receiver held at most ${fast.peak.max} at once`)
    assert.ok(fast.peak.max <= DEFAULT_SLOTS.maxPerWebhook, `the fast receiver held ${fast.peak.max} at once`)
    assert.ok(failing.peak.max <= DEFAULT_SLOTS.perWebhook, `the failing receiver held ${failing.peak.max} at once`)
  })
})

describe('a subscription whose attempts keep failing is paced (a real receiver)', () => {
  let app: TestApp
  let t: TestTenant
  let rx: Receiver
  let healthy: Receiver
  const lines: string[] = []
  let failing = true
  let inFlight = 0
  /** The most requests the receiver held at once once the subscription was paced and what was in flight then had ended. */
  let pacedPeak = 0
  let paced = false

  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true, retryBaseMs: 60_000, deliveryTimeoutMs: 5000 }, { logger: createLogger('info', (l) => lines.push(l)) })
    t = await app.tenant()
    rx = await startReceiver({
      respond: async () => {
        inFlight++
        if (paced) pacedPeak = Math.max(pacedPeak, inFlight)
        await new Promise((r) => setTimeout(r, 30))
        inFlight--
        return { status: failing ? 500 : 200 }
      },
    })
    healthy = await startReceiver()
  })
  after(async () => {
    await app.close()
    await Promise.all([rx.close(), healthy.close()])
  })

  test(`after ${PACE_AFTER_FAILURES} failures in a row: one attempt at a time with a pause between two, the tenant's other subscription untouched; once it answers 200 its backlog goes at full speed`, async () => {
    const webhook = async (url: string) => {
      const r = await t.request('POST', '/v1/webhooks', { body: { url, events: ['customer.created'], secret: 'whsec_0123456789abcdef' } })
      assert.equal(r.status, 201, r.text)
      return r.body.data.id as string
    }
    const id = await webhook(rx.url)
    await webhook(healthy.url)
    const events = 300
    const { deps } = app.server
    const ctx = { ...deps, tenantId: t.id, keyId: t.keyId }
    await withTx(deps.engine, async (scope) => {
      for (let i = 0; i < events; i++) await emit(scope, ctx, 'customer.created', { id: `cus_${i}` })
    })
    await rx.waitFor(PACE_AFTER_FAILURES, 10_000)
    const logged = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    const start = Date.now()
    while (!logged().some((l) => String(l.msg).startsWith('webhook subscription paced') && l.webhook_id === id)) {
      assert.ok(Date.now() - start < 5000, 'the pacing is logged')
      await new Promise((r) => setTimeout(r, 10))
    }
    const line = logged().find((l) => String(l.msg).startsWith('webhook subscription paced'))!
    assert.equal(line.level, 'warn')
    assert.equal(line.tenant_id, t.id)
    // What was in flight when the 32nd failure came back still arrives; then one at a time, PACE_MS apart.
    await new Promise((r) => setTimeout(r, 200))
    const settled = rx.requests.length
    paced = true
    assert.ok(settled <= PACE_AFTER_FAILURES + DEFAULT_SLOTS.perWebhook + 200 / PACE_MS + 1, `${settled} attempts before the pacing held`)
    const window = 20 * PACE_MS
    await new Promise((r) => setTimeout(r, window))
    const probes = rx.requests.length - settled
    // Each probe takes its 30 ms and then the pause: at most one per PACE_MS, and at least a few.
    assert.ok(probes >= 3 && probes <= window / PACE_MS + 1, `${probes} attempts in ${window} ms while paced`)
    assert.equal(pacedPeak, 1, 'one attempt at a time while paced')
    await healthy.waitFor(events, 10_000) // the other subscription of the same tenant was never held back
    // The receiver recovers: the next probe succeeds and every delivery not attempted yet follows at once.
    failing = false
    const attempted = () => new Set(rx.requests.map((r) => r.headers['x-webhook-id'])).size
    const recovering = Date.now()
    while (attempted() < events) {
      assert.ok(Date.now() - recovering < 10_000, `${attempted()} of ${events} deliveries attempted 10 s after the receiver recovered`)
      await new Promise((r) => setTimeout(r, 20))
    }
    assert.ok(logged().some((l) => l.msg === 'webhook subscription no longer paced: an attempt succeeded' && l.webhook_id === id && l.level === 'info'))
  })

  test('ten paced subscriptions with 10,000 queued deliveries each are deactivated one after another: 200 each, and their queues are dropped', async () => {
    const other = await app.tenant('Other')
    const down = await startReceiver({ respond: [500] })
    try {
      const { deps } = app.server
      const now = new Date().toISOString()
      const eventId = newId('evt')
      await deps.db.insertInto('events').values({ id: eventId, tenant_id: other.id, name: 'customer.created', payload: '{"id":"cus_1"}', created_at: now } as never).execute()
      const ids: string[] = []
      for (let h = 0; h < 10; h++) {
        const r = await other.request('POST', '/v1/webhooks', { body: { url: `${down.url}/${h}`, events: ['customer.created'], secret: 'whsec_0123456789abcdef' } })
        assert.equal(r.status, 201, r.text)
        ids.push(r.body.data.id as string)
        // 10,000 deliveries due now (of one event: the worker sends each as it would any), written by the database itself.
        await sql`INSERT INTO deliveries (id, tenant_id, webhook_id, event_id, event, status, attempts, retries, manual, created_at, due_at)
          SELECT ${oldIdSql(deps.db, 'del')} || ${`${h}`}, ${other.id}, ${r.body.data.id}, ${eventId}, 'customer.created', 'pending', 0, 0, 0, ${now}, ${now} FROM ${series(deps.db, 10_000)}`.execute(deps.db)
      }
      deps.notify() // queued outside any request: look now
      const start = Date.now()
      while (!ids.every((id) => lines.some((l) => l.includes('webhook subscription paced') && l.includes(id)))) {
        assert.ok(Date.now() - start < 20_000, 'every subscription is paced')
        await new Promise((r) => setTimeout(r, 10))
      }
      // The worker keeps claiming and recording the others' deliveries, ten a second each, while each PATCH runs.
      for (const id of ids) {
        const off = await other.request('PATCH', `/v1/webhooks/${id}`, { body: { active: false } })
        assert.equal(off.status, 200, off.text)
        const queued = await deps.db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n'))
          .where('webhook_id', '=', id).where('due_at', 'is not', null).executeTakeFirstOrThrow()
        assert.equal(Number(queued.n), 0, 'nothing of its queue is left when the PATCH is answered')
      }
    } finally {
      await down.close()
    }
  })
})
