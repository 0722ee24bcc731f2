import { AdaptiveLimits } from '../concurrency.ts'
import { FairPlanner, type InFlight, type Plan, type SlotLimits } from '../plan.ts'
import type { Claim, Job, QueuedWebhook } from '../port.ts'

/** An answer slower than this is a sign the receiver is loaded: its subscription's limit is halved. */
const _FAST_MS = 1000

/**
 * The worker's slot accounting: what is in flight (attempts sending, slots a plan reserved for a
 * claim not yet returned) by tenant and by subscription, each subscription's adaptive limit
 * (concurrency.ts), the fair planner (plan.ts) that deals what is free, and what lease() needs to
 * know to leave a subscription out. Knows nothing of the store, the timers or the HTTP client.
 */
export interface Slots {
  /** Each subscription's limit, adapted to its receiver's answers. */
  readonly limits: AdaptiveLimits
  /** Attempts in flight or slots reserved, by subscription (a subscription with none is absent). */
  readonly byWebhook: ReadonlyMap<string, number>
  /** Attempts whose answer has not arrived yet. */
  readonly sending: number
  /** The last plan ran out of process-wide slots with due work left: only the round-robin deals what frees up. */
  readonly behind: boolean
  /** Plans `queued` against what is in flight now; the plan decides `behind`. */
  plan(queued: QueuedWebhook[], now: string): Plan
  /**
   * A claim whose plan holds the slots it dealt (counted as in flight) until release(), called
   * once the claim returned and before its jobs start. A store may plan twice in one call (SQLite
   * looks before it takes the write lock): the last plan holds.
   */
  claim(c: { now: Date; leaseUntil: string; owner: string; queued?: QueuedWebhook[]; exclude?: string[] }, planned?: (p: Plan) => void): { claim: Claim; release: () => void }
  /** An attempt starts (1) or its answer is in (-1): a slot is free again then, not when it is recorded. */
  count(job: Job, by: 1 | -1): void
  /** Whether a tenant's last leased deliveries all found no room (until one of its attempts ends). */
  isFull(tenantId: string): boolean
  markFull(tenantId: string): void
  /** The tenant's subscriptions that cannot start an attempt now (lease().skip), or undefined. */
  blocked(tenantId: string): string[] | undefined
  /** One finished attempt, ended at `at` (performance.now()), told to the adaptive limits; says when its subscription becomes paced or stops being paced. */
  observe(job: Job, delivered: boolean, durationMs: number, busy: number, at?: number): 'paced' | 'recovered' | undefined
}

export function createSlots(limitsOf: SlotLimits): Slots {
  const planner = new FairPlanner(limitsOf)
  const limits = new AdaptiveLimits({ floor: limitsOf.perWebhook, max: limitsOf.maxPerWebhook, fastMs: _FAST_MS })
  const byTenant = new Map<string, number>()
  const byWebhook = new Map<string, number>()
  /** Slots a plan dealt whose claim has not returned yet: counted as in flight, so two claims in flight never exceed a limit. */
  let reserved = 0
  let sending = 0
  let behind = false
  /** Tenants whose last leased deliveries found no room at all; until one of their attempts ends, their commits are not leased (giving back each would cost a statement). */
  const full = new Set<string>()
  /** Paced subscriptions by tenant, as their attempts' outcomes said: lease() skips those in their pause. */
  const pacedOf = new Map<string, Set<string>>()
  /** Subscriptions with attempts in flight or slots reserved, by tenant: lease() skips those at their limit. */
  const busyOf = new Map<string, Set<string>>()

  /** What the planner is told is in flight, and how each subscription's limit stands. */
  const inFlight = (): InFlight => ({ total: sending + reserved, byTenant, byWebhook, webhookLimits: limits.raised, paced: limits.paced, clockMs: performance.now() })

  const plan = (queued: QueuedWebhook[], now: string): Plan => {
    const p = planner.plan(queued, now, inFlight())
    behind = p.short
    return p
  }

  const add = (tenant: string, webhook: string, n: number): void => {
    const t = (byTenant.get(tenant) ?? 0) + n
    if (t > 0) byTenant.set(tenant, t)
    else byTenant.delete(tenant)
    const h = (byWebhook.get(webhook) ?? 0) + n
    let busy = busyOf.get(tenant)
    if (h > 0) {
      byWebhook.set(webhook, h)
      if (!busy) busyOf.set(tenant, (busy = new Set()))
      busy.add(webhook)
    } else {
      byWebhook.delete(webhook)
      if (busy?.delete(webhook) && busy.size === 0) busyOf.delete(tenant)
    }
  }

  /** Slots reserved by a plan (n > 0) or given back (n < 0). */
  const bump = (tenant: string, webhook: string, n: number): void => {
    reserved += n
    add(tenant, webhook, n)
  }

  return {
    limits,
    byWebhook,
    get sending() { return sending },
    get behind() { return behind },
    plan,
    claim(c, planned) {
      let held: { tenant: string; webhook: string; n: number }[] = []
      const release = () => {
        for (const h of held) bump(h.tenant, h.webhook, -h.n)
        held = []
      }
      const claim: Claim = {
        now: c.now.toISOString(),
        leaseUntil: c.leaseUntil,
        owner: c.owner,
        queued: c.queued,
        exclude: c.exclude,
        plan: (q, nowIso) => {
          release()
          const p = plan(q, nowIso)
          planned?.(p)
          const tenantOf = new Map(q.map((h) => [h.webhook_id, h.tenant_id]))
          held = p.webhooks.map((h) => ({ tenant: tenantOf.get(h.webhook_id)!, webhook: h.webhook_id, n: h.limit }))
          for (const h of held) bump(h.tenant, h.webhook, h.n)
          return p.webhooks
        },
      }
      return { claim, release }
    },
    count(job, by) {
      sending += by
      if (by < 0) full.delete(job.tenant_id)
      add(job.tenant_id, job.webhook_id, by)
    },
    isFull: (tenantId) => full.has(tenantId),
    markFull: (tenantId) => void full.add(tenantId),
    /**
     * At their limit (a paced one with its one attempt in flight included), or paced and in their
     * pause. Their deliveries are written unleased: leased, each would be given back by a
     * statement of its own, once per commit for as long as the receiver is slow or failing.
     */
    blocked(tenantId) {
      let skip: string[] | undefined
      const busy = busyOf.get(tenantId)
      if (busy) for (const id of busy) if (byWebhook.get(id)! >= limits.limit(id)) (skip ??= []).push(id)
      const paced = pacedOf.get(tenantId)
      if (paced) {
        const now = performance.now()
        for (const id of paced) {
          const until = limits.paced.get(id)
          if (until === undefined) paced.delete(id) // no longer paced
          else if (until > now && !byWebhook.has(id)) (skip ??= []).push(id)
        }
        if (paced.size === 0) pacedOf.delete(tenantId)
      }
      return skip
    },
    observe(job, delivered, durationMs, busy, at) {
      const change = limits.observe(job.webhook_id, delivered, durationMs, busy, at)
      if (change === 'paced') {
        let paced = pacedOf.get(job.tenant_id)
        if (!paced) {
          if (pacedOf.size >= 10_000) pacedOf.clear() // as the limits forget (concurrency.ts): nothing is skipped then
          pacedOf.set(job.tenant_id, (paced = new Set()))
        }
        paced.add(job.webhook_id)
      } else if (change === 'recovered') pacedOf.get(job.tenant_id)?.delete(job.webhook_id)
      return change
    },
  }
}
