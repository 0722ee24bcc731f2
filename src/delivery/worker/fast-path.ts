import type { FreshWork } from '../../context.ts'
import { READY_CAP, type Job, type Lease, type QueuedHook } from '../port.ts'
import { leaseUntil, type Core } from './core.ts'

export interface FastPath {
  /** Worker.wake(): see worker.ts. */
  wake(fresh?: FreshWork): void
  /** Worker.lease(): see worker.ts. */
  lease(tenantId: string): Lease | null
  /** stop(): what commits named and no claim took yet is announced; settles once a fast claim in progress has ended (its jobs given back). */
  drain(): Promise<void>
}

/**
 * The fast path: what a commit in this process just queued, either written already leased to this
 * worker (lease(), then wake() with the jobs: started at once as far as the limits allow, the rest
 * given back by `handBack`), or claimed from the subscriptions the commit named, in one store call
 * without a queue read and beside a cycle that may be in progress. `look` is a cycle that reads
 * the queue, for what the fast path leaves.
 */
export function createFastPath(core: Core, start: (job: Job) => void, look: () => void, handBack: (ids: string[]) => void): FastPath {
  const { slots, reads } = core
  /** Subscriptions that local commits gave deliveries since the last fast claim, with how many. */
  const fresh = new Map<string, QueuedHook>()
  let claimingFresh: Promise<void> | undefined

  function wake(hint?: FreshWork): void {
    if (hint?.jobs) {
      takeLeased(hint.jobs)
      if (hint.jobs.length < hint.webhookIds.length) unleased(hint)
      return
    }
    if (core.stopping) return reads.handOff()
    if (!hint || hint.webhookIds.length === 0) {
      // Work queued here without naming it (a retry or replay asked over the API): also look
      // again once the attempts in flight now are recorded (a manual retry of one is due then).
      reads.plainWake()
      return look()
    }
    for (const id of hint.webhookIds) {
      const q = fresh.get(id)
      if (q) q.ready++
      else fresh.set(id, { webhook_id: id, tenant_id: hint.tenantId, due: null, ready: 1 })
    }
    claimFresh()
  }

  function lease(tenantId: string): Lease | null {
    if (core.stopping || slots.behind || !core.started || slots.isFull(tenantId)) return null
    const l: { owner: string; until: string; skip?: string[] } = { owner: core.owner, until: leaseUntil(core, core.clock.now()) }
    const skip = slots.blocked(tenantId)
    if (skip) l.skip = skip
    return l
  }

  /**
   * Deliveries a commit here wrote already leased to this worker (lease()): planned by the same
   * fair planner as every claim, started at once as far as the limits allow; the rest are given
   * back (due at once, for the next cycle here or another process).
   */
  function takeLeased(jobs: readonly Job[]): void {
    if (jobs.length === 0) return
    let room = new Map<string, number>()
    if (!core.stopping) {
      const now = core.clock.now().toISOString()
      const queued = new Map<string, QueuedHook>()
      for (const j of jobs) {
        const q = queued.get(j.webhook_id)
        if (q) q.ready = Math.min(q.ready + 1, READY_CAP)
        else queued.set(j.webhook_id, { webhook_id: j.webhook_id, tenant_id: j.tenant_id, due: now, ready: 1 })
      }
      const p = slots.plan([...queued.values()], now)
      room = new Map(p.hooks.map((h) => [h.webhook_id, h.limit]))
    }
    const back: string[] = []
    for (const job of jobs) {
      const n = room.get(job.webhook_id) ?? 0
      if (n > 0) {
        room.set(job.webhook_id, n - 1)
        start(job)
      } else back.push(job.id)
    }
    if (back.length === 0) return
    if (back.length === jobs.length && !core.stopping) slots.markFull(jobs[0]!.tenant_id)
    handBack(back)
  }

  /**
   * Deliveries a commit wrote unleased for subscriptions that could not start an attempt
   * (lease().skip). A paced one with its attempt in flight is read when that attempt is recorded
   * (a failure reads the queue, and its pause ends with another read; a success ends the pacing
   * and reads it); one at its limit is read by the cycle that records its next answer, and
   * announced to the other processes, as given-back work is; for the others the queue is read
   * when the first of their pauses ends (at once if none is pausing any more).
   */
  function unleased(hint: FreshWork): void {
    if (core.stopping) return reads.handOff()
    const leased = new Set(hint.jobs!.map((j) => j.webhook_id))
    const now = performance.now()
    let at = Infinity
    let read = false
    for (const id of hint.webhookIds) {
      if (leased.has(id)) continue
      const until = slots.limits.paced.get(id)
      if (!slots.byHook.has(id)) at = Math.min(at, until ?? now)
      else if (until === undefined) read = true
    }
    if (read) {
      reads.whenFree()
      reads.handOff()
    }
    if (at !== Infinity) reads.lookAt(at, now)
  }

  /**
   * The subscriptions that commits here just gave deliveries, planned by the same fair planner
   * (limits and reservations included) and claimed in one store call without a queue read,
   * beside a cycle that may be in progress. One at a time; what commits queue meanwhile goes in
   * the next. When the engine is behind, or the plan could not take all of it, the ordinary cycle
   * runs instead / as well, so nothing waits for the poll.
   */
  function claimFresh(): void {
    if (claimingFresh || fresh.size === 0 || core.stopping) return
    if (slots.behind) {
      fresh.clear()
      reads.handOff()
      return reads.whenFree()
    }
    const now = core.clock.now()
    const queued = [...fresh.values()].map((q) => ({ ...q, due: now.toISOString(), ready: Math.min(q.ready, READY_CAP) }))
    fresh.clear()
    let partial = false
    const exclude = core.recording.length > 0 ? core.recording : undefined
    const c = slots.claim({ now, leaseUntil: leaseUntil(core, now), owner: core.owner, queued, exclude }, (p) => {
      const dealt = new Map(p.hooks.map((h) => [h.webhook_id, h.limit]))
      // A paced subscription's work waits for its pause (the read the pause ends with takes it), like work not yet due.
      partial = queued.some((q) => (dealt.get(q.webhook_id) ?? 0) < q.ready && !p.pausing.has(q.webhook_id))
    })
    claimingFresh = core.ready.then(() => core.store.cycle([], c.claim)).then(async ({ jobs }) => {
      c.release()
      if (core.stopping) handBack(jobs.map((j) => j.id))
      else for (const job of jobs) start(job)
      if (partial) {
        reads.handOff()
        reads.whenFree()
      }
    }, (err: unknown) => {
      c.release()
      core.logger.warn('delivery fast claim failed; the next cycle claims instead', { error: String(err) })
      reads.handOff()
      look()
    }).finally(() => {
      claimingFresh = undefined
      claimFresh()
    })
  }

  return {
    wake,
    lease,
    async drain() {
      if (fresh.size > 0) reads.handOff()
      fresh.clear()
      await claimingFresh // its jobs are given back, not started
    },
  }
}
