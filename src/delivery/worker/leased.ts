import type { FreshWork } from '../fresh-work.ts'
import { READY_CAP, type Job, type Lease, type QueuedWebhook } from '../port.ts'
import { leaseUntil, type Core } from './core.ts'

export interface Leased {
  /** Worker.lease(): see worker.ts. */
  lease(tenantId: string): Lease | null
  /** The jobs a commit wrote under lease(): started as far as the limits allow, the rest given back by `handBack`. */
  take(jobs: readonly Job[]): void
  /** What the same commit wrote unleased (lease().skip): a look at the queue is set for when it can be taken. */
  unleased(hint: FreshWork): void
}

/**
 * The lease half of the fast path: the lease a committing transaction writes its deliveries
 * under, leaving out the subscriptions that cannot start an attempt now, and what becomes of the
 * jobs once the commit hands them over.
 */
export function createLeased(core: Core, start: (job: Job) => void, handBack: (ids: string[]) => void): Leased {
  const { slots, reads } = core

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
  function take(jobs: readonly Job[]): void {
    if (jobs.length === 0) return
    let room = new Map<string, number>()
    if (!core.stopping) {
      const now = core.clock.now().toISOString()
      const queued = new Map<string, QueuedWebhook>()
      for (const j of jobs) {
        const q = queued.get(j.webhook_id)
        if (q) q.ready = Math.min(q.ready + 1, READY_CAP)
        else queued.set(j.webhook_id, { webhook_id: j.webhook_id, tenant_id: j.tenant_id, due: now, ready: 1 })
      }
      const p = slots.plan([...queued.values()], now)
      room = new Map(p.webhooks.map((h) => [h.webhook_id, h.limit]))
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
      if (!slots.byWebhook.has(id)) at = Math.min(at, until ?? now)
      else if (until === undefined) read = true
    }
    if (read) {
      reads.whenFree()
      reads.handOff()
    }
    if (at !== Infinity) reads.lookAt(at, now)
  }

  return { lease, take, unleased }
}
