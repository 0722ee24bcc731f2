import { randomUUID } from 'node:crypto'
import type { FreshWork } from './fresh-work.ts'
import type { SlotLimits } from './plan.ts'
import type { DeliveryStore, Lease } from './port.ts'
import { createAttempts, type AttemptOptions } from './worker/attempt.ts'
import type { Core } from './worker/core.ts'
import { createCycles } from './worker/cycle.ts'
import { createFastPath } from './worker/fast-path.ts'
import { createGiveBack } from './worker/give-back.ts'
import { createLifecycle } from './worker/lifecycle.ts'
import { createReads } from './worker/reads.ts'
import { createSlots } from './worker/slots.ts'

/** What startWorker() needs: what one attempt needs (worker/attempt.ts; `random` defaults to Math.random), and the store and limits. */
export interface WorkerOptions extends Omit<AttemptOptions, 'random'> {
  store: DeliveryStore
  /** How long a claim holds unless renewed; renewed every third of it while the attempt runs. */
  leaseMs?: number
  slots?: Partial<SlotLimits>
  /** Safety-net poll (work queued by another process, e.g. `travelops deliveries retry`). */
  pollMs?: number
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
export const DEFAULT_SLOTS: SlotLimits = { total: 256, perTenant: 64, perWebhook: 8, maxPerWebhook: 32 }
/**
 * The delivery loop: claim due deliveries fairly (plan.ts) with leases it renews, send each
 * outside any transaction with a deadline of its own, record outcomes in batches, schedule
 * retries. Two ways in: a cycle that reads the queue and deals its free slots round-robin, and
 * the fast path: what a commit in this process just queued, written already leased to this
 * worker (lease()) and started as soon as the commit is done, or else claimed from the
 * subscriptions the commit named (no queue read, no wait for a cycle in progress). Talks to the
 * database only through the store port (port.ts). Never imports http/.
 *
 * Composed of parts (worker/), each owning its state: slots (what is in flight, the limits, the
 * planner), reads (when the queue is read and work announced), the fast path (lease(), wake()),
 * one attempt (sign, send, outcome), the cycle (record and claim) and the lifecycle (start,
 * renewal, backstop, stop).
 */
export function startWorker(o: WorkerOptions): Worker {
  const core: Core = {
    owner: `wrk_${randomUUID()}`,
    leaseMs: o.leaseMs ?? 15_000,
    store: o.store,
    clock: o.clock,
    logger: o.logger,
    slots: createSlots({ ...DEFAULT_SLOTS, ...o.slots }),
    reads: createReads(look, () => o.store.announce?.()),
    ready: Promise.resolve(),
    running: new Map(),
    background: new Set(),
    recording: [],
    stopping: false,
    started: false,
  }
  const life = createLifecycle(core, o, heard, (now) => attempts.sweep(now))
  const attempts = createAttempts(core, { ...o, random: o.random ?? Math.random }, life.signal, (outcome) => cycles.record(outcome))
  const cycles = createCycles(core, o.pollMs ?? 1000, attempts.start)
  const giveBack = createGiveBack(core)
  const fastPath = createFastPath(core, attempts.start, look, giveBack.handBack)

  /** A cycle that reads the queue (a cycle that only records outcomes does not, unless it must: see reads.ts). */
  function look(): void {
    core.reads.whenFree()
    cycles.run()
  }

  /** Another process announced work it could not take. */
  function heard(): void {
    core.reads.heard()
    cycles.run()
  }

  core.reads.next(0)

  return {
    wake: fastPath.wake,
    lease: fastPath.lease,
    stop: (graceMs = 8_000) => life.stop(graceMs, { fastPath, cycles, giveBack }),
  }
}
