const HOUR_MS = 3_600_000

export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  /** Unix epoch seconds when the window resets. */
  reset: number
  retryAfter: number
}

/**
 * Fixed one-hour windows per API key, counted in memory: one `serve` process owns the
 * counters (a restart starts fresh windows; this is written in the README).
 */
export class RateLimiter {
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
    const resetMs = (window + 1) * HOUR_MS
    const allowed = w.count < limit
    if (allowed) w.count++
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - w.count),
      reset: Math.ceil(resetMs / 1000),
      retryAfter: Math.max(1, Math.ceil((resetMs - nowMs) / 1000)),
    }
  }

  #sweep(window: number): void {
    for (const [k, w] of this.#windows) if (w.window !== window) this.#windows.delete(k)
    this.#sweptWindow = window
  }
}
