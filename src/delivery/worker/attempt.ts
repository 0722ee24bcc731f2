import type { Clock } from '../../lib/clock.ts'
import { sendableCustomHeaders } from '../../lib/http-headers.ts'
import type { Logger } from '../../lib/logger.ts'
import { PACE_MS } from '../concurrency.ts'
import type { Job, Outcome } from '../port.ts'
import { decideAttempt } from '../rules/attempt.ts'
import type { Sender, SendRequest, SendResult } from '../send.ts'
import { deliveryHeaders } from '../sign.ts'
import type { Core, Running } from './core.ts'

/** How long after the receiver deadline the engine's own timer ends an attempt that the HTTP client did not. */
export const BACKSTOP_MS = 500

export interface AttemptOptions {
  clock: Clock
  logger: Logger
  sender: Sender
  userAgent: string
  retryBaseMs: number
  /** The receiver deadline (`--delivery-timeout`): the backstop ends an attempt still without an answer BACKSTOP_MS after it. */
  timeoutMs: number
  random: () => number
  /** Told of every finished attempt (`--metrics`). */
  observe?: (outcome: 'delivered' | 'failed', seconds: number) => void
}

export interface Attempts {
  /** Starts one attempt of a claimed or leased job, counted in its slots until its answer is in. */
  start(job: Job): void
  /**
   * The engine's own deadline, for when the sender does not keep its own (a request stuck in the
   * HTTP client): an attempt still without an answer BACKSTOP_MS after the receiver deadline at
   * `now` (performance.now()) is ended as a timeout, and that subscription's connections are dropped.
   */
  sweep(now: number): void
}

const _STARTED: Promise<void> = Promise.resolve()

/**
 * One attempt: sign and send the job, free its slot when the answer is in, tell the adaptive
 * limits, log it, and hand its outcome to the cycle that records it (`record`, which settles once
 * it is recorded). `signal` ends every attempt still waiting (stop() past its grace).
 */
export function createAttempts(core: Core, o: AttemptOptions, signal: AbortSignal, record: (outcome: Outcome) => Promise<void>): Attempts {
  const { running, slots } = core

  async function attempt(entry: Running): Promise<void> {
    try {
      await attempted(entry)
    } finally {
      running.delete(entry.job.id)
    }
  }

  async function attempted(entry: Running): Promise<void> {
    const job = entry.job
    const at = o.clock.now()
    let result: SendResult
    let busy = 0
    try {
      result = await new Promise<SendResult>((resolve) => {
        entry.end = resolve
        o.sender.send(request(job, o.userAgent, o.clock.now()), signal).then(resolve)
      })
    } finally {
      entry.end = null
      busy = slots.byWebhook.get(job.webhook_id) ?? 0
      slots.count(job, -1)
    }
    if (result.aborted) return // shutdown before any answer: given back by stop(), attempted again later
    const outcome = outcomeOf(job, at, result, o)
    const change = slots.observe(job, outcome.delivered, result.durationMs, busy)
    if (change === 'paced') {
      o.logger.warn('webhook subscription paced: its attempts keep failing; one at a time until one succeeds', {
        webhook_id: job.webhook_id, tenant_id: job.tenant_id, pause_ms: PACE_MS,
      })
    } else if (change === 'recovered') {
      // Commits meanwhile wrote its work unleased: the cycle that records this success reads the queue.
      core.reads.whenFree()
      o.logger.info('webhook subscription no longer paced: an attempt succeeded', { webhook_id: job.webhook_id, tenant_id: job.tenant_id })
    }
    o.observe?.(outcome.delivered ? 'delivered' : 'failed', result.durationMs / 1000)
    if (outcome.delivered) o.logger.debug('delivery attempt', { delivery_id: job.id, webhook_id: job.webhook_id, code: outcome.responseCode })
    else {
      // Never the secret, header values or body (CONTRACT §11).
      o.logger.warn('delivery attempt failed', {
        delivery_id: job.id, webhook_id: job.webhook_id, tenant_id: job.tenant_id, event: job.event, status: outcome.responseCode, error: outcome.error,
        next_retry_at: outcome.nextRetryAt,
      })
    }
    await record(outcome)
  }

  return {
    start(job) {
      slots.count(job, 1)
      const entry: Running = { job, done: _STARTED, at: performance.now(), end: null }
      running.set(job.id, entry)
      entry.done = attempt(entry)
    },
    sweep(now) {
      for (const r of running.values()) {
        if (!r.end || now - r.at < o.timeoutMs + BACKSTOP_MS) continue
        o.sender.reset(r.job.webhook_id)
        r.end({ responseCode: null, durationMs: Math.round(now - r.at), error: `timeout after ${o.timeoutMs} ms`, responseBody: null })
      }
    },
  }
}

/** What one attempt at `now` sends: the event's payload, signed for this attempt. */
export function request(job: Job, userAgent: string, now: Date): SendRequest {
  const attemptAt = Math.floor(now.getTime() / 1000)
  return {
    key: job.webhook_id,
    url: job.url,
    body: job.payload,
    headers: {
      ...sendableCustomHeaders(job.headers),
      ...deliveryHeaders({ id: job.event_id, at: job.eventAt, payload: job.payload }, job.secret, attemptAt, userAgent),
    },
  }
}

/** What an attempt started at `at` with this answer records: delivered or not, and when the next attempt is due (rules/attempt.ts decides). */
export function outcomeOf(job: Job, at: Date, result: SendResult, o: { clock: Clock; retryBaseMs: number; random: () => number }): Outcome {
  const decided = decideAttempt(job, result, { now: o.clock.now(), baseMs: o.retryBaseMs, random: o.random })
  const { retryAfter: _ignored, aborted: _a, ...sent } = result
  return { job, at: at.toISOString(), ...sent, ...decided }
}
