/**
 * How many attempts one subscription may have in flight, adapted to its receiver (additive
 * increase, multiplicative decrease, as TCP does with its window): every subscription starts at
 * `floor`; an attempt that succeeds quickly while the subscription used its whole limit raises
 * the limit by one, up to `max`; a failure (non-2xx, timeout, refused) or a slow answer halves it,
 * never below `floor`. So a fast, healthy receiver with a backlog is sent up to `max` at once and
 * deliveries keep pace with writes, while a slow, failing or hanging one never gets more than
 * `floor` — what every receiver got before.
 *
 * A subscription whose last `failAfter` attempts all failed is **paced** (a circuit breaker that
 * stays half-open): one attempt at a time, the next no sooner than `pauseMs` after the last one
 * ended, until one succeeds — then it starts again at `floor`. Without it, a backlog to a
 * receiver that fails at once (a refused connection, an instant 5xx) was sent as fast as the CPU
 * allowed, every attempt failing: one tenant's 100,000 such deliveries took another tenant's
 * POST from 2.8 to 16.5 ms at the median.
 */
export class AdaptiveLimits {
  readonly #floor: number
  readonly #max: number
  readonly #fastMs: number
  readonly #failAfter: number
  readonly #pauseMs: number
  readonly #raised = new Map<string, number>()
  /** Consecutive failed attempts, by subscription (none: its last attempt succeeded). */
  readonly #streaks = new Map<string, number>()
  /** Paced subscriptions: no attempt starts before this (performance.now()). */
  readonly #paced = new Map<string, number>()

  constructor(o: { floor: number; max: number; fastMs: number; failAfter?: number; pauseMs?: number }) {
    this.#floor = o.floor
    this.#max = Math.max(o.floor, o.max)
    this.#fastMs = o.fastMs
    this.#failAfter = o.failAfter ?? PACE_AFTER_FAILURES
    this.#pauseMs = o.pauseMs ?? PACE_MS
  }

  /** Paced subscriptions (one attempt in flight at most), each with the time before which none may start (performance.now()). */
  get paced(): ReadonlyMap<string, number> {
    return this.#paced
  }

  /** The limits above the floor, by subscription (the planner's view). */
  get raised(): ReadonlyMap<string, number> {
    return this.#raised
  }

  limit(key: string): number {
    return this.#paced.has(key) ? 1 : this.#raised.get(key) ?? this.#floor
  }

  /**
   * One finished attempt, ended at `at` (performance.now()); `busy` is how many of the
   * subscription's attempts were in flight, this one included. Says when the subscription
   * becomes paced or stops being paced.
   */
  observe(key: string, ok: boolean, durationMs: number, busy: number, at = performance.now()): 'paced' | 'recovered' | undefined {
    if (ok) {
      this.#streaks.delete(key)
      if (this.#paced.delete(key)) return 'recovered' // at the floor again
    } else {
      const streak = (this.#streaks.get(key) ?? 0) + 1
      _bounded(this.#streaks, key).set(key, streak)
      if (streak >= this.#failAfter) {
        const fresh = !this.#paced.has(key)
        _bounded(this.#paced, key).set(key, at + this.#pauseMs)
        this.#raised.delete(key)
        return fresh ? 'paced' : undefined
      }
    }
    const now = this.limit(key)
    let next = now
    if (!ok || durationMs > this.#fastMs) next = Math.max(this.#floor, Math.floor(now / 2))
    else if (busy >= now && now < this.#max) next = now + 1
    if (next === now) return
    if (next <= this.#floor) this.#raised.delete(key)
    else _bounded(this.#raised, key).set(key, next)
    return undefined
  }
}

/** Consecutive failures after which a subscription is paced. */
export const PACE_AFTER_FAILURES = 32
/** A paced subscription's pause between the end of one attempt and the start of the next. */
export const PACE_MS = 100

/** Subscriptions come and go: past 10,000 a map starts again (they start again at the floor, unpaced). */
function _bounded<V>(map: Map<string, V>, key: string): Map<string, V> {
  if (!map.has(key) && map.size >= 10_000) map.clear()
  return map
}
