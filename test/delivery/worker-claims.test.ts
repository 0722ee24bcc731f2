import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { DEFAULT_CONFIG } from '../../src/config.ts'
import type { FreshWork } from '../../src/context.ts'
import { withTx } from '../../src/engine/tx.ts'
import { ClaimFailed, type DeliveryStore } from '../../src/delivery/port.ts'
import { createSender, type Sender, type SendResult } from '../../src/delivery/send.ts'
import { startWorker, type Worker } from '../../src/delivery/worker.ts'
import { PACE_AFTER_FAILURES, PACE_MS } from '../../src/delivery/concurrency.ts'
import { requeueDeliveries } from '../../src/delivery/requeue.ts'
import { emit } from '../../src/events/emit.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'
import { insertWebhook, storeUnderTest } from '../helpers/store.ts'

// How the worker claims (issue 15, PostgreSQL's event → receipt time), on the suite's engine
// with a real receiver. The fast path: the subscriptions a commit in this process just gave
// deliveries are claimed at once, from what the commit named, without reading the queue first
// and beside a cycle that may be in progress. The planner's limits hold across two claims in
// flight (a plan's slots count as in flight until its claim returns); work that no slot can take
// now (the engine behind, a subscription at its limit) costs its commit no claim and no read of
// the queue, and is dealt by the cycle that records a freed slot; a slot is free once its answer is in.

let env: Awaited<ReturnType<typeof storeUnderTest>>
const receivers: Receiver[] = []
const workers: Worker[] = []
before(async () => { env = await storeUnderTest() })
after(async () => {
  await Promise.all(workers.map((w) => w.stop(0)))
  await Promise.all(receivers.map((r) => r.close()))
  await env.close()
})

/** Every store call noted: outcomes recorded, whether the queue was read, which subscriptions a fast claim named, how many jobs came back. */
interface Noted { outcomes: number; read: boolean; queued: string[] | null; jobs: number }
let _last: Noted[] = []

/** The store of the test's database, noting each cycle; `hold`, when given, delays the return of ordinary cycles that claimed something. */
function observed(hold?: () => Promise<void>): { store: DeliveryStore; cycles: Noted[]; announced: { count: number } } {
  const cycles: Noted[] = []
  _last = cycles
  const inner = env.store
  const announced = { count: 0 }
  return {
    cycles,
    announced,
    store: {
      ...inner,
      // What would be NOTIFY on PostgreSQL, counted on either engine (not sent on: this worker is the only one).
      announce: () => void announced.count++,
      cycle: async (outcomes, claim) => {
        const r = await inner.cycle(outcomes, claim)
        cycles.push({ outcomes: outcomes.length, read: !!claim && !claim.queued, queued: claim?.queued ? claim.queued.map((q) => q.webhook_id).sort() : null, jobs: r.jobs.length })
        if (claim && !claim.queued && r.jobs.length > 0 && hold) await hold()
        return r
      },
    },
  }
}

function worker(store: DeliveryStore, slots?: Parameters<typeof startWorker>[0]['slots'], logger = createLogger('silent')): Worker {
  const w = startWorker({
    store, clock: systemClock, logger, userAgent: 'travelops/test', retryBaseMs: 3_600_000, timeoutMs: 5000,
    sender: createSender({ timeoutMs: 5000, allowPrivate: true, userAgent: 'travelops/test', connectionsPerKey: 8 }),
    pollMs: 60_000, slots,
  })
  workers.push(w)
  return w
}

/** `n` order.created events in one transaction; `notify` hears what the commit queued; `w`: written under that worker's lease, as serve does. */
async function commit(n: number, notify: (fresh?: FreshWork) => void = () => {}, w?: Pick<Worker, 'lease'>): Promise<void> {
  const ctx = { db: env.opened.db, engine: env.opened.engine, clock: systemClock, config: DEFAULT_CONFIG, logger: createLogger('silent'), notify, lease: w && ((tenantId: string) => w.lease(tenantId)), tenantId: env.tenantId, keyId: env.keyId }
  await withTx(env.opened.engine, async (scope) => {
    for (let i = 0; i < n; i++) await emit(scope, ctx, 'order.created', { id: `ord_${i}` })
  })
}

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; !ok(); await sleep(5)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(_last)}`)
}

/** Subscriptions of the test's tenant to order.created, pointing at `rx`; the earlier tests' are paused. */
async function addWebhooks(rx: Receiver, n: number): Promise<string[]> {
  await env.opened.db.updateTable('webhooks').set({ active: 0 } as never).where('tenant_id', '=', env.tenantId).execute()
  const ids: string[] = []
  for (let i = 0; i < n; i++) ids.push(await insertWebhook(env.opened.db, env.tenantId, { url: rx.url, events: JSON.stringify(['order.created']) }))
  return ids.sort()
}

async function receiver(respond?: NonNullable<Parameters<typeof startReceiver>[0]>['respond']): Promise<Receiver> {
  const rx = await startReceiver({ respond })
  receivers.push(rx)
  return rx
}

/** A receiver that holds every request until `release()`, then answers 200; `peak()`: the most it held at once. */
async function gated(): Promise<{ rx: Receiver; release: () => void; peak: () => number }> {
  let release!: () => void
  const open = new Promise<void>((r) => (release = r))
  let now = 0
  let peak = 0
  const rx = await receiver(async () => {
    peak = Math.max(peak, ++now)
    await open
    now--
    return { status: 200 }
  })
  return { rx, release, peak: () => peak }
}

/** `n` subscriptions to `rx` (a receiver answering 200 by default) and a worker observed from its first cycle on. */
async function workerFor(n: number, rx?: Receiver, slots?: Parameters<typeof worker>[1]) {
  const target = rx ?? await receiver()
  const webhooks = await addWebhooks(target, n)
  const { store, cycles, announced } = observed()
  const w = worker(store, slots)
  await until('the first cycle', () => cycles.length > 0)
  return { rx: target, webhooks, cycles, announced, w }
}

test('a commit\'s deliveries are claimed from the subscriptions it named, without a queue read', async () => {
  const { rx, webhooks, cycles, w } = await workerFor(2)
  const before = cycles.length
  await commit(1, (fresh) => w.wake(fresh))
  await rx.waitFor(2)
  assert.deepEqual(cycles[before], { outcomes: 0, read: false, queued: webhooks, jobs: 2 }, 'the next store call after the commit is the fast claim, and it claims both')
  await until('both answers recorded', () => cycles.slice(before).reduce((n, c) => n + c.outcomes, 0) === 2)
  assert.deepEqual(cycles.slice(before + 1).filter((c) => c.read || c.queued), [], 'recording two successes reads nothing: nothing else was queued')
  await w.stop() // each test's worker is the only one claiming
})

test('a commit writes its deliveries leased to the worker, which sends them with no claim at all', async () => {
  const { rx, webhooks, cycles, w } = await workerFor(2)
  const before = cycles.length
  const told: FreshWork[] = []
  await commit(2, (fresh) => (told.push(fresh!), w.wake(fresh)), w)
  assert.equal(told.length, 2)
  assert.ok(told.every((f) => f.jobs?.length === 2 && f.jobs.every((j) => j.owner === told[0]!.jobs![0]!.owner && j.url === rx.url)), 'each event\'s two deliveries come as the worker\'s jobs')
  await rx.waitFor(4)
  await until('the four answers recorded', () => cycles.slice(before).reduce((n, c) => n + c.outcomes, 0) === 4)
  assert.deepEqual(cycles.slice(before).filter((c) => c.read || c.queued), [], 'neither a fast claim nor a queue read')
  assert.equal(rx.requests.length, 4, 'each delivery sent once')
  const rows = await env.opened.db.selectFrom('deliveries').select(['webhook_id', 'status', 'locked_by']).where('id', 'in', told.flatMap((f) => f.jobs!.map((j) => j.id))).execute()
  assert.deepEqual(rows.map((r) => [r.status, r.locked_by]), Array.from({ length: 4 }, () => ['delivered', null]), 'recorded, the lease cleared')
  assert.deepEqual([...new Set(rows.map((r) => r.webhook_id))].sort(), webhooks)
  await w.stop()
})

test('leased deliveries beyond the limits are given back, announced, and sent as slots free up; no lease once stopping', async () => {
  const { rx: held, release, peak } = await gated()
  const { rx, announced, w } = await workerFor(1, held, { perWebhook: 1, maxPerWebhook: 1 })
  await commit(3, (fresh) => w.wake(fresh), w)
  await rx.waitFor(1)
  // Each of the three events is handed over on its own: one started, two given back.
  const leased = async () => Number((await env.opened.db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', env.tenantId).where('status', '=', 'pending').where('locked_by', 'is not', null).executeTakeFirstOrThrow()).n)
  for (const end = Date.now() + 5000; (await leased()) !== 1;) {
    if (Date.now() > end) throw new Error(`still ${await leased()} leased: only the one being sent should be`)
    await sleep(5)
  }
  assert.ok(announced.count > 0, 'what was given back is announced to the other processes')
  // The tenant's one slot is busy: its next commit is not leased (nothing to give back), it names its subscription.
  const told: FreshWork[] = []
  await commit(1, (fresh) => (told.push(fresh!), w.wake(fresh)), w)
  assert.equal(told.length, 1)
  assert.equal(told[0]!.jobs, undefined)
  release()
  await rx.waitFor(4, 10_000)
  assert.equal(peak(), 1, 'never more than the limit at the receiver')
  assert.ok(w.lease(env.tenantId), 'a lease is offered while the worker runs (one of the tenant\'s attempts has ended)')
  await w.stop()
  assert.equal(w.lease(env.tenantId), null, 'none once it has stopped')
})

test('work this process takes itself is announced to no other process', async () => {
  const { rx, cycles, announced, w } = await workerFor(2)
  for (let i = 0; i < 3; i++) await commit(2, (fresh) => w.wake(fresh))
  await rx.waitFor(12)
  await until('every answer recorded', () => cycles.reduce((n, c) => n + c.outcomes, 0) === 12)
  assert.equal(announced.count, 0)
  await w.stop()
})

test('work this process cannot take now (a subscription\'s limit reached) is announced to the others', async () => {
  const { rx: held, release } = await gated()
  const { rx, announced, w } = await workerFor(1, held, { perWebhook: 1, maxPerWebhook: 1 })
  await commit(1, (fresh) => w.wake(fresh))
  await rx.waitFor(1) // its one slot is taken until the receiver answers
  assert.equal(announced.count, 0, 'nothing left over yet')
  await commit(2, (fresh) => w.wake(fresh))
  await until('the left-over work announced', () => announced.count > 0)
  release()
  await rx.waitFor(3, 10_000)
  await w.stop()
})

test('a read that only answers another process\'s announcement does not announce back what it cannot take either (two busy processes would wake each other without end)', async () => {
  const { rx, release } = await gated()
  await addWebhooks(rx, 1)
  await commit(3) // queued before the worker starts
  const { store, cycles, announced } = observed()
  let heard: (() => void) | undefined
  const w = worker({ ...store, listen: async (wake) => { heard = wake; return async () => {} } }, { perWebhook: 1, maxPerWebhook: 1 })
  await rx.waitFor(1)
  await until('the first read announced the 2 it left', () => announced.count > 0)
  const reads = cycles.filter((c) => c.read).length
  const count = announced.count
  for (let i = 0; i < 3; i++) {
    heard!() // another process's NOTIFY
    await until('the read it asked for', () => cycles.filter((c) => c.read).length === reads + i + 1)
  }
  await sleep(50)
  assert.equal(announced.count, count, 'the reads answering announcements announced nothing back')
  release()
  await rx.waitFor(3, 10_000)
  await w.stop()
})

test('a fast claim beside a cycle whose claim has not returned yet: together they never exceed a subscription\'s limit', async () => {
  let now = 0
  let peak = 0
  const rx = await receiver(async () => {
    peak = Math.max(peak, ++now)
    await sleep(150)
    now--
    return { status: 200 }
  })
  await addWebhooks(rx, 1)
  await commit(3) // queued before the worker starts: its first cycle reads them and claims 2
  let gate!: () => void
  const held = new Promise<void>((r) => (gate = r))
  let holding = true
  const { store, cycles } = observed(() => (holding ? held : Promise.resolve()))
  const w = worker(store, { perWebhook: 2, maxPerWebhook: 2 })
  await until('the first cycle to claim', () => cycles.some((c) => c.read && c.jobs === 2))
  // Its 2 slots are dealt but its jobs not started: the fast claim must see them as taken.
  await commit(3, (fresh) => w.wake(fresh))
  await until('the fast claim', () => cycles.some((c) => c.queued !== null))
  holding = false
  gate()
  await rx.waitFor(6, 10_000)
  assert.equal(cycles.find((c) => c.queued !== null)?.jobs, 0, 'the fast claim got nothing: the subscription\'s 2 slots were reserved')
  assert.equal(peak, 2, 'never more than the limit at the receiver')
  await w.stop()
})

test('while the engine is behind (every process-wide slot taken with due work left), commits neither claim nor read the queue; the cycle that records a freed slot deals their work', async () => {
  const { rx, release } = await gated()
  await addWebhooks(rx, 2)
  await commit(3) // 3 due for each of the 2 subscriptions
  const { store, cycles } = observed()
  const w = worker(store, { total: 2 })
  await rx.waitFor(2) // one slot each; the 4 others wait: behind
  const before = cycles.length
  for (let i = 0; i < 5; i++) await commit(1, (fresh) => w.wake(fresh))
  await sleep(200)
  assert.deepEqual(cycles.slice(before), [], 'no fast claim and no read of the queue: no slot could take anything')
  release()
  await rx.waitFor(16, 10_000)
  assert.ok(cycles.slice(before).some((c) => c.read && c.outcomes > 0), 'the queue was read by a cycle recording answers')
  await w.stop()
})

test('a commit to subscriptions at their limit reads nothing; the work is dealt as their answers come in', async () => {
  const { rx: held, release, peak } = await gated()
  const { rx, cycles, w } = await workerFor(1, held, { perWebhook: 2, maxPerWebhook: 2 })
  await commit(2, (fresh) => w.wake(fresh))
  await rx.waitFor(2) // both slots taken until the receiver answers
  await until('the fast claims returned', () => cycles.filter((c) => c.queued !== null).reduce((n, c) => n + c.jobs, 0) === 2)
  const before = cycles.length
  for (let i = 0; i < 5; i++) await commit(1, (fresh) => w.wake(fresh))
  await sleep(200)
  assert.deepEqual(cycles.slice(before).filter((c) => c.read || c.jobs > 0), [], 'no queue read, nothing claimed: the subscription had no slot free')
  release()
  await rx.waitFor(7, 10_000)
  assert.equal(peak(), 2, 'never more than the limit at the receiver')
  await w.stop()
})

test('a process-wide slot is free again when its answer is in: the cycle that records it already deals it (no wait for the poll)', async () => {
  const rx = await receiver()
  await addWebhooks(rx, 2)
  await commit(3) // 3 due for each of the 2 subscriptions, 2 slots in all, a poll far away
  const { store } = observed()
  const w = worker(store, { total: 2 })
  await rx.waitFor(6, 5000)
  await w.stop()
})

test('work from elsewhere while an attempt is in flight (a manual retry of it) is claimed once that attempt is recorded, not at the poll', async () => {
  const rx = await receiver((_req, n) => ({ status: n === 0 ? 500 : 200, delayMs: n === 1 ? 300 : 0 }))
  const [webhook] = await addWebhooks(rx, 1)
  const w = startWorker({
    store: observed().store, clock: systemClock, logger: createLogger('silent'), userAgent: 'travelops/test', retryBaseMs: 50, timeoutMs: 5000,
    sender: createSender({ timeoutMs: 5000, allowPrivate: true, userAgent: 'travelops/test' }), pollMs: 60_000, random: () => 0,
  })
  workers.push(w)
  await commit(1, (fresh) => w.wake(fresh))
  await rx.waitFor(2) // the first attempt failed; its automatic retry is in flight, answered in 300 ms
  const [d] = await env.opened.db.selectFrom('deliveries').select('id').where('webhook_id', '=', webhook!).execute()
  assert.deepEqual(await requeueDeliveries(env.opened, { ids: [d!.id] }, new Date()), [d!.id])
  w.wake() // as the API does after a retry: no subscriptions named
  await rx.waitFor(3, 3000)
  await w.stop()
})

test('a cycle that recorded its answers but could not claim is logged as a failed claim, nothing is sent twice, and the queue is read again', async () => {
  const rx = await receiver()
  const [webhook] = await addWebhooks(rx, 1)
  await commit(3)
  // As PostgreSQL's store does when the claim beside a recording fails: the answers are saved, the claim is not.
  const inner = observed().store
  let failed = 0
  const store: DeliveryStore = {
    ...inner,
    cycle: async (outcomes, claim) => {
      if (claim && outcomes.length > 0 && failed === 0) {
        failed++
        await inner.cycle(outcomes)
        throw new ClaimFailed(new Error('Connection terminated unexpectedly'))
      }
      return inner.cycle(outcomes, claim)
    },
  }
  const lines: string[] = []
  const w = startWorker({
    store, clock: systemClock, logger: createLogger('error', (line) => lines.push(line)), userAgent: 'travelops/test', retryBaseMs: 3_600_000, timeoutMs: 5000,
    sender: createSender({ timeoutMs: 5000, allowPrivate: true, userAgent: 'travelops/test' }), pollMs: 100, slots: { perWebhook: 1, maxPerWebhook: 1 },
  })
  workers.push(w)
  await rx.waitFor(3, 5000)
  await w.stop()
  assert.equal(failed, 1, 'a claim failed beside a recording')
  const rows = await env.opened.db.selectFrom('deliveries').select(['attempts', 'status']).where('webhook_id', '=', webhook!).execute()
  assert.deepEqual(rows.map((r) => [r.attempts, r.status]), [[1, 'delivered'], [1, 'delivered'], [1, 'delivered']])
  assert.equal(rx.requests.length, 3)
  const logged = lines.map((l) => JSON.parse(l).msg as string)
  assert.deepEqual(logged, ['could not claim due deliveries; the attempts were recorded, the queue is read again'])
})

test('an event loop held past the backstop\'s margin: the attempts\' own deadlines end them, and no subscription\'s connections are dropped', async () => {
  const rx = await receiver()
  await addWebhooks(rx, 1)
  await commit(2)
  const TIMEOUT_MS = 300
  // A sender that keeps its own deadline, as the real one does, and counts the backstop's resets.
  let started = 0
  let resets = 0
  const sender: Sender = {
    send: () => {
      started++
      return new Promise<SendResult>((resolve) => setTimeout(() => resolve({ responseCode: null, durationMs: TIMEOUT_MS, error: `timeout after ${TIMEOUT_MS} ms`, responseBody: null }), TIMEOUT_MS))
    },
    reset: () => void resets++,
    close: async () => {},
  }
  const w = startWorker({
    store: observed().store, clock: systemClock, logger: createLogger('silent'), userAgent: 'travelops/test', retryBaseMs: 3_600_000, timeoutMs: TIMEOUT_MS,
    sender, pollMs: 50,
  })
  workers.push(w)
  await until('both attempts started', () => started === 2)
  // The event loop held (a long synchronous task): every timer of this window expires meanwhile.
  const end = performance.now() + TIMEOUT_MS + 700
  while (performance.now() < end) { /* held */ }
  await sleep(100)
  assert.equal(resets, 0, 'the deadlines that expired with the backstop\'s tick ended their attempts first')
  await w.stop()
})

test('a paced subscription\'s deliveries are written unleased while it cannot start one: nothing is given back, the tenant\'s other deliveries are still sent at once, the paced work goes at its pause\'s end and all of it once it answers again', async () => {
  // The paced receiver fails at once, then holds one attempt, then answers 200.
  let mode: 'fail' | 'hold' | 'ok' = 'fail'
  let answer!: () => void
  const held = new Promise<void>((r) => (answer = r))
  const paced = await receiver(async () => {
    if (mode === 'fail') return { status: 500 }
    if (mode === 'hold') await held
    return { status: 200 }
  })
  const healthy = await receiver()
  await env.opened.db.updateTable('webhooks').set({ active: 0 } as never).where('tenant_id', '=', env.tenantId).execute()
  const pacedId = await insertWebhook(env.opened.db, env.tenantId, { url: paced.url, events: JSON.stringify(['order.created']) })
  await insertWebhook(env.opened.db, env.tenantId, { url: healthy.url, events: JSON.stringify(['order.created']) })
  const lines: string[] = []
  const { store: inner, cycles } = observed()
  let given = 0
  const store: DeliveryStore = { ...inner, release: (ids, owner) => (given++, inner.release(ids, owner)) }
  const w = worker(store, undefined, createLogger('info', (l) => lines.push(l)))
  await until('the first cycle', () => cycles.length > 0)
  const wake = (fresh?: FreshWork) => w.wake(fresh)
  const attempted = () => new Set(paced.requests.map((r) => r.headers['x-webhook-id'])).size
  // Whether each commit's lease left the paced subscription out. A lease taken less than a pause
  // after the paced receiver's last request (each one fails) is taken while that attempt is in
  // flight or in the pause after it: it must leave it out. One taken while it could start an
  // attempt (its pause over, none in flight) includes it; if a read starts its attempt (or one
  // fails and a pause begins) before that commit is done — on PostgreSQL the commit is round trips
  // away — the leased delivery has no room and is given back, as designed. Only those may be.
  let leftOut = false
  let leftOutCount = 0
  let inPause = false
  const leasing = { lease: (tenantId: string) => {
    const last = paced.requests.at(-1)?.at
    inPause = last !== undefined && Date.now() < last + PACE_MS - 1
    const l = w.lease(tenantId)
    leftOut = l === null || (l.skip ?? []).includes(pacedId)
    if (leftOut) leftOutCount++
    return l
  } }
  let events = PACE_AFTER_FAILURES
  await commit(PACE_AFTER_FAILURES, wake, w)
  await until('the subscription paced', () => lines.some((l) => l.includes('webhook subscription paced') && l.includes(pacedId)), 10_000)
  await healthy.waitFor(events)
  await sleep(2 * PACE_MS) // what was given back before the pacing has been read again
  // Ten commits of one event each while it is paced, most within a pause, the rest beside its one
  // attempt; a commit's give-back runs on the turn after it, within that commit's step here.
  let inPauses = 0
  for (let i = 0; i < 10; i++, events++) {
    const g = given
    await commit(1, wake, leasing)
    await sleep(PACE_MS / 5)
    if (inPause) {
      inPauses++
      assert.ok(leftOut, `commit ${i}: leased in a pause, the paced subscription not left out`)
    }
    if (leftOut) assert.equal(given - g, 0, `commit ${i}: its lease left the paced subscription out, and something was given back`)
    else assert.ok(given - g <= 1, `commit ${i}: ${given - g} give-backs for one delivery`)
  }
  assert.ok(inPauses > 0, 'some of the ten commits were leased in a pause')
  await healthy.waitFor(events)
  // (The poll is a minute away: each step below is the worker's own doing.)
  await until('its queue attempted, one a pause', () => attempted() === events, 10_000)
  // Work committed in a pause that follows a read which found none: taken when the pause ends.
  await sleep(PACE_MS / 4)
  await commit(1, wake, w)
  events++
  await until('the work committed in a pause attempted once it ended', () => attempted() === events, 3000)
  // An attempt in flight (its pause over, nothing else queued), commits meanwhile, then it succeeds: the rest goes at once.
  await sleep(2 * PACE_MS)
  mode = 'hold'
  await commit(1, wake, w)
  events++
  await until('the next attempt held', () => attempted() === events, 3000)
  const [heldGiven, heldLeftOut] = [given, leftOutCount]
  for (let i = 0; i < 5; i++, events++) await commit(1, wake, leasing)
  await healthy.waitFor(events)
  assert.equal(leftOutCount - heldLeftOut, 5, 'beside its attempt in flight, every lease left the paced subscription out')
  assert.equal(given - heldGiven, 0, 'nothing given back beside its attempt in flight')
  mode = 'ok'
  answer()
  await until(`all ${events} events attempted at the paced subscription`, () => attempted() === events, 3000)
  assert.ok(lines.some((l) => l.includes('webhook subscription no longer paced') && l.includes(pacedId)))
  await w.stop()
})

test('a subscription at its limit has its commits\' deliveries written unleased: nothing is given back, the tenant\'s other subscription is sent at once, and they go as its answers come in', async () => {
  const { rx: held, release, peak } = await gated()
  const healthy = await receiver()
  await env.opened.db.updateTable('webhooks').set({ active: 0 } as never).where('tenant_id', '=', env.tenantId).execute()
  await insertWebhook(env.opened.db, env.tenantId, { url: held.url, events: JSON.stringify(['order.created']) })
  await insertWebhook(env.opened.db, env.tenantId, { url: healthy.url, events: JSON.stringify(['order.created']) })
  const { store: inner, cycles, announced } = observed()
  let given = 0
  const store: DeliveryStore = { ...inner, release: (ids, owner) => (given++, inner.release(ids, owner)) }
  const w = worker(store, { perWebhook: 1, maxPerWebhook: 1 })
  await until('the first cycle', () => cycles.length > 0)
  const wake = (fresh?: FreshWork) => w.wake(fresh)
  await commit(1, wake, w)
  await held.waitFor(1) // its one slot taken until the receiver answers
  await healthy.waitFor(1)
  for (let i = 0; i < 5; i++) {
    await commit(1, wake, w)
    await sleep(10)
  }
  await healthy.waitFor(6)
  assert.equal(given, 0, 'no statement gave back a delivery of the subscription at its limit')
  assert.equal(held.requests.length, 1)
  assert.ok(announced.count > 0, 'what this process cannot take now is announced to the others')
  release()
  // (The poll is a minute away: the cycles that record its answers read the queue.)
  await held.waitFor(6, 5000)
  assert.equal(peak(), 1, 'never more than its limit at the receiver')
  assert.equal(given, 0)
  await w.stop()
})
