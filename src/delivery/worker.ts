import type { Db } from '../db/connect.ts'
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import { nextRetryAt } from './retry.ts'
import type { Sender } from './send.ts'
import { signPayload } from './sign.ts'
import * as store from './store.ts'

export interface WorkerOptions {
  db: Db
  clock: Clock
  logger: Logger
  sender: Sender
  userAgent: string
  retryBaseMs: number
  /** How long a claim holds: the receiver deadline plus a margin. */
  leaseMs: number
  concurrency?: number
  /** At most this many attempts in flight per subscription, so one slow receiver cannot hold up the rest. */
  perWebhook?: number
  /** Safety-net poll (work queued by another process, e.g. `travelops deliveries retry`). */
  pollMs?: number
  random?: () => number
}

export interface Worker {
  /** New work was committed: look now (the latency path). */
  wake(): void
  /** Stop claiming, let attempts in flight finish (at most graceMs), give back the rest. */
  stop(graceMs?: number): Promise<void>
}

/**
 * The delivery loop: claim due deliveries (with a lease that a crash lets expire), send each
 * outside any transaction, record outcomes in batches, schedule retries. Never imports http/.
 */
export function startWorker(o: WorkerOptions): Worker {
  const concurrency = o.concurrency ?? 64
  const perWebhook = o.perWebhook ?? 8
  const pollMs = o.pollMs ?? 1000
  const random = o.random ?? Math.random
  const inflight = new Map<string, Promise<void>>()
  const perHook = new Map<string, number>()
  const outcomes: store.Outcome[] = []
  let stopping = false
  let closed = false
  let ticking = false
  let again = false
  let timer: NodeJS.Timeout | undefined
  let flushing: Promise<void> | undefined

  const ready = store.releaseAllLeases(o.db).catch((err: unknown) => o.logger.error('could not release leases', { error: String(err) }))

  const schedule = (ms: number) => {
    if (stopping) return
    clearTimeout(timer)
    timer = setTimeout(wake, Math.max(0, ms))
    timer.unref()
  }

  function wake(): void {
    if (stopping) return
    if (ticking) {
      again = true
      return
    }
    ticking = true
    tick().catch((err: unknown) => o.logger.error('delivery loop error', { error: String(err) })).finally(() => {
      ticking = false
      if (again) {
        again = false
        setImmediate(wake)
      }
    })
  }

  async function tick(): Promise<void> {
    await ready
    while (!stopping && inflight.size < concurrency) {
      const now = o.clock.now()
      const saturated = [...perHook].filter(([, n]) => n >= perWebhook).map(([id]) => id)
      const jobs = await store.claimDue(o.db, now.toISOString(), new Date(now.getTime() + o.leaseMs).toISOString(), concurrency - inflight.size, saturated)
      if (jobs.length === 0) break
      const giveBack: string[] = []
      for (const job of jobs) {
        if (!job.live) await store.dropJob(o.db, job)
        else if ((perHook.get(job.webhook_id) ?? 0) >= perWebhook) giveBack.push(job.id)
        else _start(job)
      }
      await store.releaseJobs(o.db, giveBack)
      if (giveBack.length === jobs.length) break
    }
    const due = await store.nextDueAt(o.db)
    const wait = due === null ? pollMs : Math.min(pollMs, Date.parse(due) - o.clock.now().getTime())
    schedule(wait)
  }

  function _start(job: store.Job): void {
    perHook.set(job.webhook_id, (perHook.get(job.webhook_id) ?? 0) + 1)
    const p = _attempt(job).finally(() => {
      inflight.delete(job.id)
      const n = (perHook.get(job.webhook_id) ?? 1) - 1
      if (n > 0) perHook.set(job.webhook_id, n)
      else perHook.delete(job.webhook_id)
    })
    inflight.set(job.id, p)
  }

  async function _attempt(job: store.Job): Promise<void> {
    const envelope = JSON.parse(job.payload) as { id: string; timestamp: string }
    const at = o.clock.now()
    const result = await o.sender.send({
      url: job.url,
      body: job.payload,
      headers: {
        ...job.headers,
        'Content-Type': 'application/json',
        'User-Agent': o.userAgent,
        'X-Webhook-ID': envelope.id,
        'X-Webhook-Timestamp': envelope.timestamp,
        'X-Webhook-Signature': signPayload(job.secret, job.payload),
      },
    })
    const delivered = result.responseCode !== null && result.responseCode >= 200 && result.responseCode < 300
    let next: string | null = null
    let retries = job.retries
    if (!delivered && !job.manual) {
      const when = nextRetryAt({
        retriesSoFar: job.retries, retryCount: job.retryCount, eventAt: new Date(job.eventAt), now: o.clock.now(), baseMs: o.retryBaseMs, random,
      })
      if (when) {
        next = when.toISOString()
        retries++
      }
    } else if (!delivered && job.manual) {
      next = job.next_retry_at // a manual attempt leaves the automatic schedule as it was
    }
    if (closed) return // stopped meanwhile: the lease was given back, the attempt will be made again
    outcomes.push({ job, at: at.toISOString(), ...result, delivered, nextRetryAt: next, retries })
    o.logger.debug('delivery attempt', { delivery_id: job.id, webhook_id: job.webhook_id, code: result.responseCode, delivered, error: result.error })
    await _flush()
  }

  /** Outcomes finished in the same tick share one transaction. */
  function _flush(): Promise<void> {
    flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      const batch = outcomes.splice(0)
      flushing = undefined
      try {
        await store.recordOutcomes(o.db, batch)
      } catch (err) {
        o.logger.error('could not record delivery attempts; they will be retried when their lease expires', { error: String(err) })
      }
      wake()
    })
    return flushing
  }

  schedule(0)

  return {
    wake,
    async stop(graceMs = 10_000) {
      stopping = true
      clearTimeout(timer)
      const all = Promise.allSettled([...inflight.values()])
      let timedOut = false
      await Promise.race([all, new Promise<void>((r) => setTimeout(() => { timedOut = true; r() }, graceMs).unref())])
      if (timedOut) await store.releaseJobs(o.db, [...inflight.keys()]).catch(() => {})
      await flushing
      closed = true
      await o.sender.close()
    },
  }
}
