import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import { randomUUID } from 'node:crypto'
import { setMaxListeners } from 'node:events'
import { AdaptiveLimits, PACE_MS } from './concurrency.ts'
import type { FreshWork } from './fresh-work.ts'
import { FairPlanner, type Plan, type SlotLimits } from './plan.ts'
import { ClaimFailed, READY_CAP, type Claim, type DeliveryStore, type Disabled, type Job, type Lease, type Outcome, type QueuedHook } from './port.ts'
import { decideAttempt } from './rules/attempt.ts'
import type { Sender, SendRequest, SendResult } from './send.ts'
import { signPayload, standardSignature } from './sign.ts'
import { sendableCustomHeaders } from '../lib/http-headers.ts'

export interface WorkerOptions {
  store: DeliveryStore
  clock: Clock
  logger: Logger
  sender: Sender
  userAgent: string
  retryBaseMs: number
  /** The receiver deadline (`--delivery-timeout`): every attempt ends at most 1 s after it. */
  timeoutMs: number
  /** How long a claim holds unless renewed; renewed every third of it while the attempt runs. */
  leaseMs?: number
  slots?: Partial<SlotLimits>
  /** Safety-net poll (work queued by another process, e.g. `travelops deliveries retry`). */
  pollMs?: number
  /** Told of every finished attempt (`--metrics`). */
  observe?: (outcome: 'delivered' | 'failed', seconds: number) => void
  random?: () => number
}

export interface Worker {
  /**
   * New work was committed: look now (the latency path). With jobs (the deliveries were
   * written under lease()), those are started at once as far as the limits allow; with only
   * the subscriptions a commit in this process gave deliveries, those are claimed at once,
   * beside any cycle in progress, without reading the queue first — unless the engine is
   * behind. Both are the fast path.
   */
  wake(fresh?: FreshWork): void
  /**
   * The lease a transaction of `tenantId` about to queue deliveries may write them under (null
   * while the engine is behind, before the worker is ready, once it is stopping, and while that
   * tenant's last leased deliveries all had to be given back): then the commit hands them to
   * wake() as jobs, sent at once with no claim at all. It skips the tenant's subscriptions that
   * cannot start an attempt now (at their limit, or paced and in their pause): theirs are written
   * unleased (_unleased()).
   */
  lease(tenantId: string): Lease | null
  /**
   * Stop claiming; let attempts in flight finish for at most `graceMs`, then abort the rest
   * (they are given back, to be attempted again); record every answer received; close.
   */
  stop(graceMs?: number): Promise<void>
}

/**
 * 8 attempts in flight per subscription, raised up to 32 while its receiver answers 2xx within
 * FAST_MS (concurrency.ts); 64 per tenant, 256 in all. Measured: with 8 per subscription, 30 s of POST at full speed left 76 % of the webhooks
 * unsent at the end, every slot busy; with up to 32, 4 % or less.
 */
export const DEFAULT_SLOTS: SlotLimits = { total: 256, perTenant: 64, perHook: 8, maxPerHook: 32 }
/** An answer slower than this is a sign the receiver is loaded: its subscription's limit is halved. */
const _FAST_MS = 1000
/** How long after the receiver deadline the engine's own timer ends an attempt that the HTTP client did not. */
const _BACKSTOP_MS = 500
/** How often the backstop looks at the attempts in flight. */
const _SWEEP_MS = 250

interface Running {
  job: Job
  done: Promise<void>
  /** When it was started (performance.now()). */
  at: number
  /** Settles the attempt's wait for its answer (the backstop, or shutdown past its grace); null once the answer is in. */
  end: ((result: SendResult) => void) | null
}

const _STARTED: Promise<void> = Promise.resolve()

/**
 * The delivery loop: claim due deliveries fairly (plan.ts) with leases it renews, send each
 * outside any transaction with a deadline of its own, record outcomes in batches, schedule
 * retries. Two ways in: a cycle that reads the queue and deals its free slots round-robin, and
 * the fast path: what a commit in this process just queued, written already leased to this
 * worker (lease()) and started as soon as the commit is done, or else claimed from the
 * subscriptions the commit named (no queue read, no wait for a cycle in progress). Talks to the database only
 * through the store port (port.ts). Never imports http/.
 */
export function startWorker(o: WorkerOptions): Worker {
  const owner = `wrk_${randomUUID()}`
  const leaseMs = o.leaseMs ?? 15_000
  const pollMs = o.pollMs ?? 1000
  const random = o.random ?? Math.random
  const slots = { ...DEFAULT_SLOTS, ...o.slots }
  const planner = new FairPlanner(slots)
  const limits = new AdaptiveLimits({ floor: slots.perHook, max: slots.maxPerHook, fastMs: _FAST_MS })
  /** What the planner is told is in flight, and how each subscription's limit stands. */
  const inFlight = () => ({ total: sending + reservedTotal, byTenant, byHook, hookLimits: limits.raised, paced: limits.paced, clockMs: performance.now() })
  const running = new Map<string, Running>()
  const byTenant = new Map<string, number>()
  const byHook = new Map<string, number>()
  let outcomes: Outcome[] = []
  let recorded: (() => void)[] = []
  /** Deliveries whose outcomes a cycle is recording now: a fast claim beside it leaves them alone. */
  let recording: string[] = []
  /** Slots a plan dealt whose claim has not returned yet: counted as in flight, so two claims in flight never exceed a limit. */
  let reservedTotal = 0
  /** Attempts whose answer has not arrived yet (`running` also holds those whose answer is being recorded). */
  let sending = 0
  /** The last plan ran out of process-wide slots with due work left: only the round-robin deals what frees up. */
  let behind = false
  /** Subscriptions that local commits gave deliveries since the last fast claim, with how many. */
  const fresh = new Map<string, QueuedHook>()
  let claimingFresh: Promise<void> | undefined
  /**
   * The queue must be read: at start, at the poll or a due time, after a wake without hints,
   * while a plan left due work undealt. Otherwise a cycle that records answers does not read
   * it: every delivery queued since was named by its commit and claimed by the fast path.
   */
  let needRead = true
  /**
   * The next read was asked for by this process (not only by another's announcement): due work
   * it leaves undealt is announced. A read that only answers an announcement does not announce
   * back what it cannot take either: the process that announced it knows it is there, and two
   * busy processes would otherwise wake each other to read the queue without end.
   */
  let ownRead = true
  /** When the last wake without hints came (performance.now()). */
  let plainWakeAt = -1
  let stopping = false
  /** Set once the store has recovered and listens: before that no lease is offered. */
  let started = false
  /** Leased deliveries to give back (_handBack()): given back by statements of `background`. */
  const toGiveBack: string[] = []
  /** Tenants whose last leased deliveries found no room at all; until one of their attempts ends, their commits are not leased (giving back each would cost a statement). */
  const full = new Set<string>()
  /** Paced subscriptions by tenant, as their attempts' outcomes said: lease() skips those in their pause. */
  const pacedOf = new Map<string, Set<string>>()
  /** Subscriptions with attempts in flight or slots reserved, by tenant: lease() skips those at their limit. */
  const busyOf = new Map<string, Set<string>>()
  /** A look at the queue when the first pause ends of a paced subscription that commits gave unleased work (_unleased()). */
  let pauseTimer: NodeJS.Timeout | undefined
  let pauseTimerAt = Infinity
  /** Statements run beside the cycles (leases given back, a disabled subscription's queue dropped): stop() waits for these. */
  const background = new Set<Promise<void>>()
  let ticking: Promise<void> | undefined
  let again = false
  let soon = false
  let timer: NodeJS.Timeout | undefined
  let unlisten: (() => Promise<void>) | undefined

  const ready = (async () => {
    await o.store.recover(owner)
    // Another process committed work: read the queue. (A manual retry asked there of an attempt in
    // flight here is claimed by the next read after its recording, at the latest the poll's.)
    if (o.store.listen) unlisten = await o.store.listen(() => stopping || heard())
    started = true
  })().catch((err: unknown) => o.logger.error('delivery store could not start', { error: String(err) }))
  const renewal = setInterval(() => {
    const ids = [...running.keys()]
    if (ids.length === 0) return
    const until = new Date(o.clock.now().getTime() + leaseMs).toISOString()
    o.store.renew(ids, owner, until).catch((err: unknown) => o.logger.warn('could not renew delivery leases', { error: String(err) }))
  }, Math.max(100, Math.floor(leaseMs / 3)))
  renewal.unref()
  /** Aborted once, by stop() past its grace: every attempt still waiting for its answer ends (one signal for all, not one per attempt). */
  const shutdown = new AbortController()
  setMaxListeners(0, shutdown.signal)
  /**
   * The engine's own deadline, for when the sender does not keep its own (a request stuck in the
   * HTTP client): an attempt still without an answer _BACKSTOP_MS after the receiver deadline is
   * ended as a timeout, and that subscription's connections are dropped. A sweep over the
   * attempts in flight rather than a timer per attempt; the bound stays within 1 s of the deadline.
   * The sweep looks after the timers that expired with it have run (setImmediate): after the event
   * loop was held for longer than the backstop's margin, the sweep's tick came first among them and
   * took attempts whose own deadline was about to end them for stuck, dropping the connections of
   * their subscription's other attempts ("The client is destroyed" in their log).
   */
  const backstop = setInterval(() => setImmediate(() => {
    const now = performance.now()
    for (const r of running.values()) {
      if (!r.end || now - r.at < o.timeoutMs + _BACKSTOP_MS) continue
      o.sender.reset(r.job.webhook_id)
      r.end({ responseCode: null, durationMs: Math.round(now - r.at), error: `timeout after ${o.timeoutMs} ms`, responseBody: null })
    }
  }), _SWEEP_MS)
  backstop.unref()

  /** The next look at the queue: the poll, or the earliest queued delivery not yet due. */
  const schedule = (ms: number) => {
    if (stopping) return
    clearTimeout(timer)
    timer = setTimeout(look, Math.max(0, ms))
    timer.unref()
  }

  /** A cycle that reads the queue (a cycle that only records outcomes does not, unless it must: see tick()). */
  function look(): void {
    readWhenFree()
    run()
  }

  /** Another process announced work it could not take. */
  function heard(): void {
    needRead = true
    run()
  }

  /**
   * Work is queued that no slot here can take now (the subscriptions' or the process's limits
   * are reached): the queue is read again once one of the attempts in flight is answered (the
   * cycle that records it reads it), at a due time or at the poll, rather than now. A read now
   * would deal nothing; on PostgreSQL, with a backlog, it was one read of the queue per commit.
   */
  function readWhenFree(): void {
    needRead = true
    ownRead = true
  }

  /**
   * Due work this process cannot take now (its limits are reached, a fast claim failed, it is
   * stopping): the other processes are told (PostgreSQL's NOTIFY), so one with free slots
   * claims it at once instead of at its poll. Work this process claims itself is announced to
   * no one: with two processes, each hearing the other's every commit cost a queue read that
   * mostly found the work already claimed.
   */
  function handOff(): void {
    o.store.announce?.()
  }

  function lease(tenantId: string): Lease | null {
    if (stopping || behind || !started || full.has(tenantId)) return null
    const l: { owner: string; until: string; skip?: string[] } = { owner, until: new Date(o.clock.now().getTime() + leaseMs).toISOString() }
    const skip = _blocked(tenantId)
    if (skip) l.skip = skip
    return l
  }

  /**
   * The tenant's subscriptions that cannot start an attempt now: at their limit (a paced one with
   * its one attempt in flight included), or paced and in their pause. Their deliveries are
   * written unleased: leased, each would be given back by a statement of its own, once per commit
   * for as long as the receiver is slow or failing.
   */
  function _blocked(tenantId: string): string[] | undefined {
    let skip: string[] | undefined
    const busy = busyOf.get(tenantId)
    if (busy) for (const id of busy) if (byHook.get(id)! >= limits.limit(id)) (skip ??= []).push(id)
    const paced = pacedOf.get(tenantId)
    if (paced) {
      const now = performance.now()
      for (const id of paced) {
        const until = limits.paced.get(id)
        if (until === undefined) paced.delete(id) // no longer paced
        else if (until > now && !byHook.has(id)) (skip ??= []).push(id)
      }
      if (paced.size === 0) pacedOf.delete(tenantId)
    }
    return skip
  }

  function wake(hint?: FreshWork): void {
    if (hint?.jobs) {
      _takeLeased(hint.jobs)
      if (hint.jobs.length < hint.webhookIds.length) _unleased(hint)
      return
    }
    if (stopping) return handOff()
    if (!hint || hint.webhookIds.length === 0) {
      // Work queued here without naming it (a retry or replay asked over the API): also look
      // again once the attempts in flight now are recorded (a manual retry of one is due then).
      plainWakeAt = performance.now()
      return look()
    }
    for (const id of hint.webhookIds) {
      const q = fresh.get(id)
      if (q) q.ready++
      else fresh.set(id, { webhook_id: id, tenant_id: hint.tenantId, due: null, ready: 1 })
    }
    _claimFresh()
  }

  /**
   * Deliveries a commit here wrote already leased to this worker (lease()): planned by the same
   * fair planner as every claim, started at once as far as the limits allow; the rest are given
   * back (due at once, for the next cycle here or another process).
   */
  function _takeLeased(jobs: readonly Job[]): void {
    if (jobs.length === 0) return
    let room = new Map<string, number>()
    if (!stopping) {
      const now = o.clock.now().toISOString()
      const queued = new Map<string, QueuedHook>()
      for (const j of jobs) {
        const q = queued.get(j.webhook_id)
        if (q) q.ready = Math.min(q.ready + 1, READY_CAP)
        else queued.set(j.webhook_id, { webhook_id: j.webhook_id, tenant_id: j.tenant_id, due: now, ready: 1 })
      }
      const p = planner.plan([...queued.values()], now, inFlight())
      behind = p.short
      room = new Map(p.hooks.map((h) => [h.webhook_id, h.limit]))
    }
    const back: string[] = []
    for (const job of jobs) {
      const n = room.get(job.webhook_id) ?? 0
      if (n > 0) {
        room.set(job.webhook_id, n - 1)
        _start(job)
      } else back.push(job.id)
    }
    if (back.length === 0) return
    if (back.length === jobs.length && !stopping) full.add(jobs[0]!.tenant_id)
    _handBack(back)
  }

  /**
   * Deliveries a commit wrote unleased for subscriptions that could not start an attempt
   * (lease().skip). A paced one with its attempt in flight is read when that attempt is recorded
   * (a failure reads the queue, and its pause ends with another read; a success ends the pacing
   * and reads it); one at its limit is read by the cycle that records its next answer, and
   * announced to the other processes, as given-back work is; for the others the queue is read
   * when the first of their pauses ends (at once if none is pausing any more).
   */
  function _unleased(hint: FreshWork): void {
    if (stopping) return handOff()
    const leased = new Set(hint.jobs!.map((j) => j.webhook_id))
    const now = performance.now()
    let at = Infinity
    let read = false
    for (const id of hint.webhookIds) {
      if (leased.has(id)) continue
      const until = limits.paced.get(id)
      if (!byHook.has(id)) at = Math.min(at, until ?? now)
      else if (until === undefined) read = true
    }
    if (read) {
      readWhenFree()
      handOff()
    }
    if (at === Infinity) return
    if (pauseTimer && pauseTimerAt <= at) return
    clearTimeout(pauseTimer)
    pauseTimerAt = at
    pauseTimer = setTimeout(() => {
      pauseTimer = undefined
      pauseTimerAt = Infinity
      look()
    }, Math.max(0, at - now))
    pauseTimer.unref()
  }

  /**
   * Leased deliveries this worker will not send (no room, or it is stopping): given back, due at
   * once, and announced to the other processes. What one event-loop turn hands back goes in one
   * statement; stop() flushes what is left and waits for it.
   */
  function _handBack(ids: string[]): void {
    if (ids.length === 0) return
    if (toGiveBack.length === 0) setImmediate(_giveBack)
    toGiveBack.push(...ids)
  }

  /**
   * The rest of the queue of a subscription a cycle disabled (the cycle dropped its first batch):
   * dropped in batches beside the loop. stop() ends it between two batches and waits for it;
   * what is left then, or if it fails, is dropped by the claims as it comes due.
   */
  function _dropQueue(d: Disabled): void {
    const dropping: Promise<void> = o.store.dropQueue(d.tenant_id, d.webhook_id, () => stopping).catch((err: unknown) => {
      o.logger.warn('could not drop a disabled subscription\'s queue; the claims drop it as it comes due', { webhook_id: d.webhook_id, error: String(err) })
    }).finally(() => background.delete(dropping))
    background.add(dropping)
  }

  function _giveBack(): void {
    if (toGiveBack.length === 0) return
    const given = o.store.release(toGiveBack.splice(0), owner).catch((err: unknown) => {
      o.logger.warn('could not give back leased deliveries; they are claimed again when the lease expires', { error: String(err) })
    }).finally(() => {
      background.delete(given)
      if (!stopping) readWhenFree()
      handOff()
    })
    background.add(given)
  }

  /**
   * The fast path: the subscriptions that commits here just gave deliveries, planned by the same
   * fair planner (limits and reservations included) and claimed in one store call without a
   * queue read, beside a cycle that may be in progress. One at a time; what commits queue
   * meanwhile goes in the next. When the engine is behind, or the plan could not take all of it,
   * the ordinary cycle runs instead / as well, so nothing waits for the poll.
   */
  function _claimFresh(): void {
    if (claimingFresh || fresh.size === 0 || stopping) return
    if (behind) {
      fresh.clear()
      handOff()
      return readWhenFree()
    }
    const now = o.clock.now()
    const queued = [...fresh.values()].map((q) => ({ ...q, due: now.toISOString(), ready: Math.min(q.ready, READY_CAP) }))
    fresh.clear()
    let partial = false
    const c = _claim(now, queued, (p) => {
      const dealt = new Map(p.hooks.map((h) => [h.webhook_id, h.limit]))
      // A paced subscription's work waits for its pause (the read the pause ends with takes it), like work not yet due.
      partial = queued.some((q) => (dealt.get(q.webhook_id) ?? 0) < q.ready && !p.pausing.has(q.webhook_id))
    })
    claimingFresh = ready.then(() => o.store.cycle([], c.claim)).then(async ({ jobs }) => {
      c.release()
      if (stopping) _handBack(jobs.map((j) => j.id))
      else for (const job of jobs) _start(job)
      if (partial) {
        handOff()
        readWhenFree()
      }
    }, (err: unknown) => {
      c.release()
      o.logger.warn('delivery fast claim failed; the next cycle claims instead', { error: String(err) })
      handOff()
      look()
    }).finally(() => {
      claimingFresh = undefined
      _claimFresh()
    })
  }

  /**
   * A claim whose plan holds the slots it dealt (counted as in flight) until release(), called
   * once the claim returned and before its jobs start. A store may plan twice in one call (SQLite
   * looks before it takes the write lock): the last plan holds.
   */
  function _claim(now: Date, queued: QueuedHook[] | undefined, planned?: (p: Plan) => void): { claim: Claim; release: () => void } {
    let held: { tenant: string; hook: string; n: number }[] = []
    const release = () => {
      for (const h of held) _bump(h.tenant, h.hook, -h.n)
      held = []
    }
    const claim: Claim = {
      now: now.toISOString(),
      leaseUntil: new Date(now.getTime() + leaseMs).toISOString(),
      owner,
      queued,
      exclude: queued && recording.length > 0 ? recording : undefined,
      plan: (q, nowIso) => {
        release()
        const p = planner.plan(q, nowIso, inFlight())
        behind = p.short
        planned?.(p)
        const tenantOf = new Map(q.map((h) => [h.webhook_id, h.tenant_id]))
        held = p.hooks.map((h) => ({ tenant: tenantOf.get(h.webhook_id)!, hook: h.webhook_id, n: h.limit }))
        for (const h of held) _bump(h.tenant, h.hook, h.n)
        return p.hooks
      },
    }
    return { claim, release }
  }

  function run(): void {
    if (ticking) {
      again = true
      return
    }
    ticking = tick().catch((err: unknown) => o.logger.error('delivery loop error', { error: String(err) })).finally(() => {
      ticking = undefined
      if (again) {
        again = false
        setImmediate(run)
      }
    })
  }

  /** Attempts finished in the same event-loop turn are recorded by one cycle. */
  function _runSoon(): void {
    if (soon) return
    soon = true
    setImmediate(() => {
      soon = false
      run()
    })
  }

  async function tick(): Promise<void> {
    await ready
    const batch = outcomes
    const settle = recorded
    outcomes = []
    recorded = []
    let wait = pollMs
    let jobs: Job[] = []
    // Read the queue (and claim from it) when told to, or when an answer may have queued work
    // again: a failure (its retry), a manual attempt, an attempt that was in flight when work
    // came from elsewhere. A cycle with only other successes just records them.
    const requeues = batch.some((x) => x.job.manual > 0 || (running.get(x.job.id)?.at ?? 0) <= plainWakeAt)
    const failed = batch.some((x) => !x.delivered)
    const read = !stopping && (needRead || requeues || failed)
    const announce = ownRead || requeues || failed
    if (read) needRead = ownRead = false
    const c = read ? _claim(o.clock.now(), undefined, (p) => {
      if (p.nextDueMs !== null) wait = Math.min(wait, p.nextDueMs)
      if (p.left) {
        needRead = true
        if (announce) handOff()
      }
    }) : undefined
    recording = batch.map((x) => x.job.id)
    try {
      if (batch.length > 0 || c) {
        const done = await o.store.cycle(batch, c?.claim)
        jobs = done.jobs
        for (const d of done.disabled) {
          o.logger.warn('webhook subscription disabled', { webhook_id: d.webhook_id, tenant_id: d.tenant_id, reason: d.reason })
          _dropQueue(d)
        }
      }
    } catch (err) {
      if (read) {
        needRead = true
        ownRead ||= announce
      }
      if (err instanceof ClaimFailed) o.logger.error('could not claim due deliveries; the attempts were recorded, the queue is read again', { error: String(err.cause) })
      else if (batch.length > 0) o.logger.error('could not record delivery attempts; they will be retried when their lease expires', { error: String(err) })
      else throw err
    } finally {
      recording = []
      c?.release()
      for (const done of settle) done()
      if (read) schedule(wait)
      // A store may leave the deliveries it records out of the claim beside it (PostgreSQL):
      // one queued again by this recording is claimed by the next cycle.
      if (requeues) look()
    }
    for (const job of jobs) _start(job)
  }

  function _start(job: Job): void {
    _count(job, 1)
    const entry: Running = { job, done: _STARTED, at: performance.now(), end: null }
    running.set(job.id, entry)
    entry.done = _attempt(entry)
  }

  /** Attempts sending now: a slot is free again when its answer is in, not when it is recorded. */
  function _count(job: Job, by: 1 | -1): void {
    sending += by
    if (by < 0) full.delete(job.tenant_id)
    _add(job.tenant_id, job.webhook_id, by)
  }

  /** Slots reserved by a plan (n > 0) or given back (n < 0). */
  function _bump(tenant: string, hook: string, n: number): void {
    reservedTotal += n
    _add(tenant, hook, n)
  }

  function _add(tenant: string, hook: string, n: number): void {
    for (const [map, key] of [[byTenant, tenant], [byHook, hook]] as const) {
      const v = (map.get(key) ?? 0) + n
      if (v > 0) map.set(key, v)
      else map.delete(key)
    }
    let busy = busyOf.get(tenant)
    if (byHook.has(hook)) {
      if (!busy) busyOf.set(tenant, (busy = new Set()))
      busy.add(hook)
    } else if (busy?.delete(hook) && busy.size === 0) busyOf.delete(tenant)
  }

  async function _attempt(entry: Running): Promise<void> {
    const job = entry.job
    try {
      await _attempted(entry)
    } finally {
      running.delete(job.id)
    }
  }

  async function _attempted(entry: Running): Promise<void> {
    const job = entry.job
    const at = o.clock.now()
    let result: SendResult
    let busy = 0
    try {
      result = await new Promise<SendResult>((resolve) => {
        entry.end = resolve
        o.sender.send(_request(job), shutdown.signal).then(resolve)
      })
    } finally {
      entry.end = null
      busy = byHook.get(job.webhook_id) ?? 0
      _count(job, -1)
    }
    if (result.aborted) return // shutdown before any answer: given back by stop(), attempted again later
    const outcome = _outcome(job, at, result)
    const change = limits.observe(job.webhook_id, outcome.delivered, result.durationMs, busy)
    if (change === 'paced') {
      let paced = pacedOf.get(job.tenant_id)
      if (!paced) {
        if (pacedOf.size >= 10_000) pacedOf.clear() // as the limits forget (concurrency.ts): nothing is skipped then
        pacedOf.set(job.tenant_id, (paced = new Set()))
      }
      paced.add(job.webhook_id)
      o.logger.warn('webhook subscription paced: its attempts keep failing; one at a time until one succeeds', {
        webhook_id: job.webhook_id, tenant_id: job.tenant_id, pause_ms: PACE_MS,
      })
    } else if (change === 'recovered') {
      // Commits meanwhile wrote its work unleased: the cycle that records this success reads the queue.
      pacedOf.get(job.tenant_id)?.delete(job.webhook_id)
      readWhenFree()
      o.logger.info('webhook subscription no longer paced: an attempt succeeded', { webhook_id: job.webhook_id, tenant_id: job.tenant_id })
    }
    o.observe?.(outcome.delivered ? 'delivered' : 'failed', result.durationMs / 1000)
    if (outcome.delivered) o.logger.debug('delivery attempt', { delivery_id: job.id, webhook_id: job.webhook_id, code: outcome.responseCode })
    else {
      // Never the secret, header values or body (CONTRACT §11).
      o.logger.warn('delivery attempt failed', {
        delivery_id: job.id, webhook_id: job.webhook_id, tenant_id: job.tenant_id, event: job.event, status: outcome.responseCode, error: outcome.error,
        next_retry_at: outcome.nextRetryAt,
      })
    }
    const done = new Promise<void>((resolve) => recorded.push(resolve))
    outcomes.push(outcome)
    _runSoon()
    await done
  }

  /** What one attempt sends: the event's payload, signed for this attempt. */
  function _request(job: Job): SendRequest {
    const attemptAt = Math.floor(o.clock.now().getTime() / 1000)
    return {
      key: job.webhook_id,
      url: job.url,
      body: job.payload,
      headers: {
        ...sendableCustomHeaders(job.headers),
        'Content-Type': 'application/json',
        'User-Agent': o.userAgent,
        // The envelope's id and timestamp are the event row's (events/emit.ts writes both).
        'X-Webhook-ID': job.event_id,
        'X-Webhook-Timestamp': job.eventAt,
        'X-Webhook-Signature': signPayload(job.secret, job.payload),
        // Standard Webhooks (§11): the timestamp is this attempt's, so a receiver's replay window fits retries too.
        'webhook-id': job.event_id,
        'webhook-timestamp': String(attemptAt),
        'webhook-signature': standardSignature(job.secret, job.event_id, attemptAt, job.payload),
      },
    }
  }

  function _outcome(job: Job, at: Date, result: SendResult): Outcome {
    const decided = decideAttempt(job, result, { now: o.clock.now(), baseMs: o.retryBaseMs, random })
    const { retryAfter: _ignored, aborted: _a, ...sent } = result
    return { job, at: at.toISOString(), ...sent, ...decided }
  }

  schedule(0)

  return {
    wake,
    lease,
    async stop(graceMs = 8_000) {
      stopping = true
      clearTimeout(timer)
      clearTimeout(pauseTimer)
      if (fresh.size > 0) handOff()
      fresh.clear()
      await claimingFresh // its jobs are given back, not started
      const all = () => Promise.allSettled([...running.values()].map((r) => r.done))
      let timedOut = false
      const grace = new Promise<void>((r) => setTimeout(() => { timedOut = true; r() }, graceMs).unref())
      await Promise.race([all(), grace])
      if (timedOut) {
        const unsent = [...running.values()]
        shutdown.abort()
        // Aborted sends end at once; a sender that does not end on the signal is not waited for long.
        await Promise.race([all(), new Promise<void>((r) => setTimeout(r, _BACKSTOP_MS))])
        for (const r of running.values()) r.end?.({ responseCode: null, durationMs: Math.round(performance.now() - r.at), error: 'aborted', responseBody: null, aborted: true })
        await all() // answers that arrived are recorded by the cycles they start
        _handBack(unsent.map((r) => r.job.id))
      }
      while (ticking) await ticking
      _giveBack()
      await Promise.all(background)
      if (outcomes.length > 0) await tick().catch((err: unknown) => o.logger.error('could not record delivery attempts', { error: String(err) }))
      await Promise.all(background) // a drop that the last cycle started ends at once (stopping)
      clearInterval(renewal)
      clearInterval(backstop)
      await ready // a listen() still connecting must finish before it can be stopped
      await unlisten?.().catch(() => {})
      await o.sender.close()
    },
  }
}
