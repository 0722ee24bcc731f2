/** Retry policy for webhook deliveries (CONTRACT §7): pure functions of the attempt number. */

export const DEFAULT_RETRY_BASE_MS = 60_000
export const DEFAULT_RETRY_COUNT = 3
/** No retry is scheduled later than this after the event. */
export const RETRY_HORIZON_MS = 24 * 60 * 60 * 1000
/** ±10 % jitter. */
export const RETRY_JITTER = 0.1

/**
 * Delay before retry number `n` (n = retries so far + 1, so n ≥ 1):
 * `baseMs × 10^(n-1)`, scaled by a factor in [0.9, 1.1) drawn from `random()` ∈ [0, 1).
 */
export function retryDelayMs(n: number, baseMs: number, random: () => number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`retry number must be an integer ≥ 1, got ${n}`)
  const factor = 1 + RETRY_JITTER * (2 * random() - 1)
  return Math.round(baseMs * 10 ** (n - 1) * factor)
}

export type NextRetryInput = {
  /** Retries already made (0 after the first, failed attempt). */
  retriesSoFar: number
  /** The subscription's `retry_count`; default 3. */
  retryCount?: number
  /** When the event happened; no retry is planned more than 24 h after it. */
  eventAt: Date
  /** When the failed attempt finished. */
  now: Date
  baseMs?: number
  random?: () => number
}

/** When to try again after a failed attempt, or `null` when the record stays `failed`. */
export function nextRetryAt(input: NextRetryInput): Date | null {
  const { retriesSoFar, eventAt, now } = input
  const retryCount = input.retryCount ?? DEFAULT_RETRY_COUNT
  if (retriesSoFar >= retryCount) return null
  const delay = retryDelayMs(retriesSoFar + 1, input.baseMs ?? DEFAULT_RETRY_BASE_MS, input.random ?? Math.random)
  const at = now.getTime() + delay
  if (at - eventAt.getTime() > RETRY_HORIZON_MS) return null
  return new Date(at)
}

/**
 * A receiver's `Retry-After` (RFC 9110: delay-seconds or an HTTP date) as milliseconds from
 * `now`, or null when absent or unreadable. A date in the past is 0.
 */
export function parseRetryAfter(value: string | null | undefined, now: Date): number | null {
  if (value === null || value === undefined) return null
  const text = value.trim()
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000
  if (!/[a-z]/i.test(text)) return null
  const at = Date.parse(text)
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime())
}

/**
 * The automatic schedule pushed back to honour a receiver's back-pressure (CONTRACT §11: a 429
 * or 503 with Retry-After): no earlier than `now + retryAfterMs`, and still no later than 24 h
 * after the event (past that, no retry).
 */
export function deferredRetryAt(scheduled: Date | null, retryAfterMs: number | null, now: Date, eventAt: Date): Date | null {
  if (scheduled === null || retryAfterMs === null) return scheduled
  const at = now.getTime() + retryAfterMs
  if (at <= scheduled.getTime()) return scheduled
  return at - eventAt.getTime() > RETRY_HORIZON_MS ? null : new Date(at)
}
