import { READY_CAP, type QueuedHook } from './port.ts'

export interface SlotLimits {
  /** Attempts in flight in the whole process. */
  total: number
  /** Attempts in flight for one tenant: no tenant can take every slot. */
  perTenant: number
  /** Attempts in flight for one subscription: one slow receiver cannot take its tenant's share. */
  perHook: number
  /** What a subscription whose receiver answers quickly and well may grow to (concurrency.ts). */
  maxPerHook: number
}

/** What is in flight now, by tenant and by subscription. */
export interface InFlight {
  total: number
  byTenant: ReadonlyMap<string, number>
  byHook: ReadonlyMap<string, number>
  /** Subscriptions whose limit was raised above `perHook` (concurrency.ts). */
  hookLimits?: ReadonlyMap<string, number>
  /** Paced subscriptions (concurrency.ts): one slot at most, none before the time given (in `clockMs`'s time). */
  paced?: ReadonlyMap<string, number>
  /** performance.now() when planning: what `paced` is compared with. */
  clockMs?: number
}

export interface Plan {
  /** Subscriptions to claim from, each with its number of slots, in the order the slots were dealt. */
  hooks: { webhook_id: string; limit: number }[]
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
 * (`perHook`, or what concurrency.ts raised it to for a fast, healthy receiver). A paced
 * subscription gets one slot at most, and none until its pause ends: its due work counts as due
 * then, not as left over.
 */
export class FairPlanner {
  #limits: SlotLimits
  #lastTenant = ''
  #lastHook = new Map<string, string>()

  constructor(limits: SlotLimits) {
    this.#limits = limits
  }

  plan(queued: readonly QueuedHook[], now: string, inflight: InFlight): Plan {
    const nowMs = Date.parse(now)
    let nextDueMs: number | null = null
    const byTenant = new Map<string, { hook: QueuedHook; free: number }[]>()
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
      const limit = until !== undefined ? 1 : inflight.hookLimits?.get(h.webhook_id) ?? this.#limits.perHook
      const free = Math.min(h.ready, limit - (inflight.byHook.get(h.webhook_id) ?? 0))
      if (free <= 0) continue
      const list = byTenant.get(h.tenant_id) ?? []
      list.push({ hook: h, free })
      byTenant.set(h.tenant_id, list)
    }
    let room = this.#limits.total - inflight.total
    const tenants = _rotate([...byTenant.keys()].sort(), this.#lastTenant)
    const tenantFree = new Map(tenants.map((t) => [t, this.#limits.perTenant - (inflight.byTenant.get(t) ?? 0)]))
    const order = new Map(tenants.map((t) => {
      const hooks = byTenant.get(t)!.sort((a, b) => (a.hook.webhook_id < b.hook.webhook_id ? -1 : 1))
      return [t, _rotate(hooks, this.#lastHook.get(t) ?? '', (x) => x.hook.webhook_id)]
    }))
    const dealt = new Map<string, number>()
    const pos = new Map<string, number>()
    let progress = true
    while (room > 0 && progress) {
      progress = false
      for (const t of tenants) {
        if (room <= 0) break
        if (tenantFree.get(t)! <= 0) continue
        const hooks = order.get(t)!
        const start = pos.get(t) ?? 0
        for (let k = 0; k < hooks.length; k++) {
          const i = (start + k) % hooks.length
          const h = hooks[i]!
          if (h.free <= 0) continue
          h.free--
          dealt.set(h.hook.webhook_id, (dealt.get(h.hook.webhook_id) ?? 0) + 1)
          pos.set(t, i + 1)
          tenantFree.set(t, tenantFree.get(t)! - 1)
          room--
          progress = true
          this.#lastTenant = t
          this.#lastHook.set(t, h.hook.webhook_id)
          break
        }
      }
    }
    if (this.#lastHook.size > 10_000) this.#lastHook.clear() // tenants come and go; the rotation may restart
    const short = room <= 0 && tenants.some((t) => tenantFree.get(t)! > 0 && order.get(t)!.some((h) => h.free > 0))
    const left = queued.some((h) => h.due !== null && h.due <= now && !pausing.has(h.webhook_id) && (h.ready >= READY_CAP || h.ready > (dealt.get(h.webhook_id) ?? 0)))
    return { hooks: [...dealt].map(([webhook_id, limit]) => ({ webhook_id, limit })), nextDueMs, short, left, pausing }
  }
}

/** The sorted list starting just after `last` (by key), wrapping around. */
function _rotate<T>(sorted: T[], last: string, key: (x: T) => string = (x) => x as unknown as string): T[] {
  const i = sorted.findIndex((x) => key(x) > last)
  return i <= 0 ? sorted : [...sorted.slice(i), ...sorted.slice(0, i)]
}
