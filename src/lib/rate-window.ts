// An API key's hourly request windows (CONTRACT §5). The engine gives serve its limiter
// (Engine.rateLimiter()): this file's in-memory one for SQLite's single process, or
// engine/postgres/rate-windows.ts's, shared by every process through the database.

export const HOUR_MS = 3_600_000

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
 * counters (a restart starts fresh windows: docs/decisions/0010-rate-limit-windows.md).
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
    return rateDecision(allowed, limit, w.count, window, nowMs)
  }

  #sweep(window: number): void {
    for (const [k, w] of this.#windows) if (w.window !== window) this.#windows.delete(k)
    this.#sweptWindow = window
  }

  /** Nothing to give back: the windows die with the process. */
  async close(): Promise<void> {}
}

/** The answer for a request counted as the `used`-th of `limit` in hour `window`. */
export function rateDecision(allowed: boolean, limit: number, used: number, window: number, nowMs: number): RateDecision {
  const resetMs = (window + 1) * HOUR_MS
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - used),
    reset: Math.ceil(resetMs / 1000),
    retryAfter: Math.max(1, Math.ceil((resetMs - nowMs) / 1000)),
  }
}
