import { READY_CAP, type QueuedWebhook } from './port.ts'

export interface SlotLimits {
  /** Attempts in flight in the whole process. */
  total: number
  /** Attempts in flight for one tenant: no tenant can take every slot. */
  perTenant: number
  /** Attempts in flight for one subscription: one slow receiver cannot take its tenant's share. */
  perWebhook: number
  /** What a subscription whose receiver answers quickly and well may grow to (concurrency.ts). */
  maxPerWebhook: number
}

/** What is in flight now, by tenant and by subscription. */
export interface InFlight {
  total: number
  byTenant: ReadonlyMap<string, number>
  byWebhook: ReadonlyMap<string, number>
  /** Subscriptions whose limit was raised above `perWebhook` (concurrency.ts). */
  webhookLimits?: ReadonlyMap<string, number>
  /** Paced subscriptions (concurrency.ts): one slot at most, none before the time given (in `clockMs`'s time). */
  paced?: ReadonlyMap<string, number>
  /** performance.now() when planning: what `paced` is compared with. */
  clockMs?: number
}

export interface Plan {
  /** Subscriptions to claim from, each with its number of slots, in the order the slots were dealt. */
  webhooks: { webhook_id: string; limit: number }[]
  /** Milliseconds until the earliest queued delivery that is not yet due, or a paced subscription's pause ends (null: none). */
  nextDueMs: number | null
  /**
   * The process-wide slots ran out before every subscription with due work had what it could
   * take: the engine is behind, and only the round-robin should deal what frees up.
   */
  short: boolean
  /**
   * Due work was left undealt (a limit, the process-wide slots, or more than the queue read
   * counts): the queue must be read again when slots free up. False: this plan took everything
   * due that it was shown.
   */
  left: boolean
  /** Paced subscriptions with due work whose pause has not ended: dealt nothing, and not left over either. */
  pausing: ReadonlySet<string>
}

/**
 * Deals free slots fairly (CONTRACT §9): one slot at a time, round-robin across the tenants
 * that have due work, and within a tenant round-robin across its subscriptions; the rotation
 * continues where the previous plan stopped, so the same tenant or subscription is not always
 * first. A tenant never holds more than `perTenant` slots, a subscription more than its limit
 * (`perWebhook`, or what concurrency.ts raised it to for a fast, healthy receiver). A paced
 * subscription gets one slot at most, and none until its pause ends: its due work counts as due
 * then, not as left over.
 */
export class FairPlanner {
  #limits: SlotLimits
  #lastTenant = ''
  #lastWebhook = new Map<string, string>()

  constructor(limits: SlotLimits) {
    this.#limits = limits
  }

  plan(queued: readonly QueuedWebhook[], now: string, inflight: InFlight): Plan {
    const nowMs = Date.parse(now)
    let nextDueMs: number | null = null
    const byTenant = new Map<string, { webhook: QueuedWebhook; free: number }[]>()
    const pausing = new Set<string>()
    for (const h of queued) {
      if (h.due === null) continue
      if (h.due > now) {
        const ms = Date.parse(h.due) - nowMs
        nextDueMs = nextDueMs === null ? ms : Math.min(nextDueMs, ms)
        continue
      }
      const until = inflight.paced?.get(h.webhook_id)
      if (until !== undefined) {
        const ms = until - (inflight.clockMs ?? performance.now())
        if (ms > 0) {
          nextDueMs = nextDueMs === null ? ms : Math.min(nextDueMs, ms)
          pausing.add(h.webhook_id)
          continue
        }
      }
      const limit = until !== undefined ? 1 : inflight.webhookLimits?.get(h.webhook_id) ?? this.#limits.perWebhook
      const free = Math.min(h.ready, limit - (inflight.byWebhook.get(h.webhook_id) ?? 0))
      if (free <= 0) continue
      const list = byTenant.get(h.tenant_id) ?? []
      list.push({ webhook: h, free })
      byTenant.set(h.tenant_id, list)
    }
    let room = this.#limits.total - inflight.total
    const tenants = _rotate([...byTenant.keys()].sort(), this.#lastTenant)
    const tenantFree = new Map(tenants.map((t) => [t, this.#limits.perTenant - (inflight.byTenant.get(t) ?? 0)]))
    const order = new Map(tenants.map((t) => {
      const webhooks = byTenant.get(t)!.sort((a, b) => (a.webhook.webhook_id < b.webhook.webhook_id ? -1 : 1))
      return [t, _rotate(webhooks, this.#lastWebhook.get(t) ?? '', (x) => x.webhook.webhook_id)]
    }))
    const dealt = new Map<string, number>()
    const pos = new Map<string, number>()
    let progress = true
    while (room > 0 && progress) {
      progress = false
      for (const t of tenants) {
        if (room <= 0) break
        if (tenantFree.get(t)! <= 0) continue
        const webhooks = order.get(t)!
        const start = pos.get(t) ?? 0
        for (let k = 0; k < webhooks.length; k++) {
          const i = (start + k) % webhooks.length
          const h = webhooks[i]!
          if (h.free <= 0) continue
          h.free--
          dealt.set(h.webhook.webhook_id, (dealt.get(h.webhook.webhook_id) ?? 0) + 1)
          pos.set(t, i + 1)
          tenantFree.set(t, tenantFree.get(t)! - 1)
          room--
          progress = true
          this.#lastTenant = t
          this.#lastWebhook.set(t, h.webhook.webhook_id)
          break
        }
      }
    }
    if (this.#lastWebhook.size > 10_000) this.#lastWebhook.clear() // tenants come and go; the rotation may restart
    const short = room <= 0 && tenants.some((t) => tenantFree.get(t)! > 0 && order.get(t)!.some((h) => h.free > 0))
    const left = queued.some((h) => h.due !== null && h.due <= now && !pausing.has(h.webhook_id) && (h.ready >= READY_CAP || h.ready > (dealt.get(h.webhook_id) ?? 0)))
    return { webhooks: [...dealt].map(([webhook_id, limit]) => ({ webhook_id, limit })), nextDueMs, short, left, pausing }
  }
}

/** The sorted list starting just after `last` (by key), wrapping around. */
function _rotate<T>(sorted: T[], last: string, key: (x: T) => string = (x) => x as unknown as string): T[] {
  const i = sorted.findIndex((x) => key(x) > last)
  return i <= 0 ? sorted : [...sorted.slice(i), ...sorted.slice(0, i)]
}
