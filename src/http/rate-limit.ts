import type { Db } from '../db/connect.ts'

const HOUR_MS = 3_600_000

export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  /** Unix epoch seconds when the window resets. */
  reset: number
  retryAfter: number
}

export interface Limiter {
  /** Counts one request of `keyId` in the current hour. */
  hit(keyId: string, limit: number, nowMs: number, tenantId: string): RateDecision | Promise<RateDecision>
}

/**
 * Fixed one-hour windows per API key, counted in memory: on SQLite one `serve` process owns the
 * counters (a restart starts fresh windows; this is written in the README).
 */
export class RateLimiter implements Limiter {
  #windows = new Map<string, { window: number; count: number }>()
  #sweptWindow = 0

  hit(keyId: string, limit: number, nowMs: number): RateDecision {
    const window = Math.floor(nowMs / HOUR_MS)
    if (window !== this.#sweptWindow) this.#sweep(window)
    let w = this.#windows.get(keyId)
    if (!w || w.window !== window) {
      w = { window, count: 0 }
      this.#windows.set(keyId, w)
    }
    const allowed = w.count < limit
    if (allowed) w.count++
    return _decision(allowed, limit, w.count, window, nowMs)
  }

  #sweep(window: number): void {
    for (const [k, w] of this.#windows) if (w.window !== window) this.#windows.delete(k)
    this.#sweptWindow = window
  }
}

/**
 * The same windows counted in the database (table rate_windows), for several `serve` processes
 * on one PostgreSQL database (CONTRACT §10): one atomic upsert per request, so every process
 * sees every other's requests. Requests past the limit are counted too (and refused).
 */
export class SharedRateLimiter implements Limiter {
  constructor(private readonly db: Db) {}

  async hit(keyId: string, limit: number, nowMs: number, tenantId: string): Promise<RateDecision> {
    const hour = Math.floor(nowMs / HOUR_MS)
    const row = await this.db.insertInto('rate_windows').values({ key_id: keyId, tenant_id: tenantId, hour, count: 1 })
      .onConflict((oc) => oc.columns(['key_id', 'hour']).doUpdateSet((eb) => ({ count: eb('rate_windows.count', '+', 1) })))
      .returning('count').executeTakeFirstOrThrow()
    return _decision(row.count <= limit, limit, Math.min(row.count, limit), hour, nowMs)
  }

  /** Windows before the previous hour are no longer read. */
  async prune(nowMs: number): Promise<void> {
    await this.db.deleteFrom('rate_windows').where('hour', '<', Math.floor(nowMs / HOUR_MS) - 1).execute()
  }
}

function _decision(allowed: boolean, limit: number, used: number, window: number, nowMs: number): RateDecision {
  const resetMs = (window + 1) * HOUR_MS
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - used),
    reset: Math.ceil(resetMs / 1000),
    retryAfter: Math.max(1, Math.ceil((resetMs - nowMs) / 1000)),
  }
}
