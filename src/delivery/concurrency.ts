/**
 * How many attempts one subscription may have in flight, adapted to its receiver (additive
 * increase, multiplicative decrease, as TCP does with its window): every subscription starts at
 * `floor`; an attempt that succeeds quickly while the subscription used its whole limit raises
 * the limit by one, up to `max`; a failure (non-2xx, timeout, refused) or a slow answer halves it,
 * never below `floor`. So a fast, healthy receiver with a backlog is sent up to `max` at once and
 * deliveries keep pace with writes, while a slow, failing or hanging one never gets more than
 * `floor` — what every receiver got before.
 */
export class AdaptiveLimits {
  readonly #floor: number
  readonly #max: number
  readonly #fastMs: number
  readonly #raised = new Map<string, number>()

  constructor(o: { floor: number; max: number; fastMs: number }) {
    this.#floor = o.floor
    this.#max = Math.max(o.floor, o.max)
    this.#fastMs = o.fastMs
  }

  /** The limits above the floor, by subscription (the planner's view). */
  get raised(): ReadonlyMap<string, number> {
    return this.#raised
  }

  limit(key: string): number {
    return this.#raised.get(key) ?? this.#floor
  }

  /** One finished attempt; `busy` is how many of the subscription's attempts were in flight, this one included. */
  observe(key: string, ok: boolean, durationMs: number, busy: number): void {
    const now = this.limit(key)
    let next = now
    if (!ok || durationMs > this.#fastMs) next = Math.max(this.#floor, Math.floor(now / 2))
    else if (busy >= now && now < this.#max) next = now + 1
    if (next === now) return
    if (next <= this.#floor) this.#raised.delete(key)
    else {
      if (!this.#raised.has(key) && this.#raised.size >= 10_000) this.#raised.clear() // subscriptions come and go; they start again at the floor
      this.#raised.set(key, next)
    }
  }
}
