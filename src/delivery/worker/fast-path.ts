import type { FreshWork } from '../fresh-work.ts'
import { READY_CAP, type Job, type Lease, type QueuedWebhook } from '../port.ts'
import { leaseUntil, type Core } from './core.ts'
import { createLeased } from './leased.ts'

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
 * worker (leased.ts: lease(), then wake() with the jobs), or claimed from the subscriptions the
 * commit named, in one store call without a queue read and beside a cycle that may be in progress.
 * `look` is a cycle that reads the queue, for what the fast path leaves.
 */
export function createFastPath(core: Core, start: (job: Job) => void, look: () => void, handBack: (ids: string[]) => void): FastPath {
  const { slots, reads } = core
  const leased = createLeased(core, start, handBack)
  /** Subscriptions that local commits gave deliveries since the last fast claim, with how many. */
  const fresh = new Map<string, QueuedWebhook>()
  let claimingFresh: Promise<void> | undefined

  function wake(hint?: FreshWork): void {
    if (hint?.jobs) {
      leased.take(hint.jobs)
      if (hint.jobs.length < hint.webhookIds.length) leased.unleased(hint)
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
      const dealt = new Map(p.webhooks.map((h) => [h.webhook_id, h.limit]))
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
    lease: leased.lease,
    async drain() {
      if (fresh.size > 0) reads.handOff()
      fresh.clear()
      await claimingFresh // its jobs are given back, not started
    },
  }
}
