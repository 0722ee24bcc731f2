import type { Job } from '../port.ts'
import { deferredRetryAt, nextRetryAt, parseRetryAfter } from '../retry.ts'

/**
 * What one attempt decided (CONTRACT §7, §11), before anything is written: a 2xx is delivered;
 * anything else is a failure. An automatic attempt that failed schedules the next retry
 * (retry.ts: `base × 10^(n-1)` ± 10 %, within 24 h of the event, pushed back by a 429 or 503's
 * `Retry-After`) and counts it, or schedules nothing once the retries are spent. A manual
 * attempt (the job was claimed with manual retries to serve) leaves the automatic schedule and
 * its count as they were.
 */
export interface Decided {
  delivered: boolean
  /** When the next automatic attempt is due, or null: none. */
  nextRetryAt: string | null
  /** Automatic retries scheduled so far, this one included. */
  retries: number
}

/** The answer of one attempt, as far as the rules care. */
export interface Answer {
  /** HTTP status, or null when none arrived (timeout, refused connection, …). */
  responseCode: number | null
  /** The receiver's Retry-After header, as sent. */
  retryAfter?: string
}

export interface Schedule {
  /** When the attempt finished. */
  now: Date
  baseMs: number
  random: () => number
}

/** Answered with a 2xx: the event is delivered, and stats count the attempt as succeeded (engine/attempt-stats.ts). */
export function isDelivered(responseCode: number | null): boolean {
  return responseCode !== null && responseCode >= 200 && responseCode < 300
}

export function decideAttempt(job: Pick<Job, 'retries' | 'manual' | 'retryCount' | 'eventAt' | 'next_retry_at'>, answer: Answer, s: Schedule): Decided {
  if (isDelivered(answer.responseCode)) return { delivered: true, nextRetryAt: null, retries: job.retries }
  if (job.manual) return { delivered: false, nextRetryAt: job.next_retry_at, retries: job.retries }
  const eventAt = new Date(job.eventAt)
  const scheduled = nextRetryAt({ retriesSoFar: job.retries, retryCount: job.retryCount, eventAt, now: s.now, baseMs: s.baseMs, random: s.random })
  const when = deferredRetryAt(scheduled, parseRetryAfter(answer.retryAfter, s.now), s.now, eventAt)
  return when ? { delivered: false, nextRetryAt: when.toISOString(), retries: job.retries + 1 } : { delivered: false, nextRetryAt: null, retries: job.retries }
}

/** The attempt log's `trigger`: a job claimed with manual retries to serve is a manual attempt. */
export function attemptTrigger(job: Pick<Job, 'manual'>): 'manual' | 'auto' {
  return job.manual ? 'manual' : 'auto'
}
