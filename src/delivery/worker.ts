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
 * A cycle records the attempts finished since the last one and claims work for the freed
 * slots in one transaction (store.cycle).
 */
export function startWorker(o: WorkerOptions): Worker {
  const concurrency = o.concurrency ?? 64
  const perWebhook = o.perWebhook ?? 8
  const pollMs = o.pollMs ?? 1000
  const random = o.random ?? Math.random
  /** Every attempt until its outcome is recorded (what stop() waits for). */
  const inflight = new Map<string, Promise<void>>()
  /** Attempts still sending, per subscription: the slots. */
  const perHook = new Map<string, number>()
  let sending = 0
  const outcomes: store.Outcome[] = []
  const recorded: (() => void)[] = []
  let stopping = false
  let closed = false
  let ticking: Promise<void> | undefined
  let again = false
  let soon = false
  let timer: NodeJS.Timeout | undefined

  const ready = store.releaseAllLeases(o.db).catch((err: unknown) => o.logger.error('could not release leases', { error: String(err) }))

  const schedule = (ms: number) => {
    if (stopping) return
    clearTimeout(timer)
    timer = setTimeout(run, Math.max(0, ms))
    timer.unref()
  }

  /** New work was committed: look now. */
  function wake(): void {
    if (!stopping) run()
  }

  function run(): void {
    if (ticking) {
      again = true
      return
    }
    ticking = tick().catch((err: unknown) => o.logger.error('delivery loop error', { error: String(err) })).finally(() => {
      ticking = undefined
      if (again) {
        again = false
        setImmediate(run)
      }
    })
  }

  /** Attempts finished in the same event-loop turn are recorded by one cycle. */
  function _runSoon(): void {
    if (soon) return
    soon = true
    setImmediate(() => {
      soon = false
      run()
    })
  }

  async function tick(): Promise<void> {
    await ready
    const batch = outcomes.splice(0)
    const settle = recorded.splice(0)
    let wait = pollMs
    const plan: store.Planner = (queued, nowIso) => {
      const nowMs = Date.parse(nowIso)
      const hooks: { webhook_id: string; limit: number }[] = []
      for (const h of queued.filter((x) => x.due !== null).sort((a, b) => (a.due! < b.due! ? -1 : 1))) {
        if (h.due! > nowIso) wait = Math.min(wait, Date.parse(h.due!) - nowMs)
        else {
          const free = perWebhook - (perHook.get(h.webhook_id) ?? 0)
          if (free > 0) hooks.push({ webhook_id: h.webhook_id, limit: free }) // else its attempts wake the loop when they finish
        }
      }
      return { room: concurrency - sending, hooks }
    }
    let jobs: store.Job[] = []
    try {
      const now = o.clock.now()
      const claim = stopping || sending >= concurrency ? undefined
        : { now: now.toISOString(), leaseUntil: new Date(now.getTime() + o.leaseMs).toISOString(), plan }
      if (batch.length > 0 || claim) jobs = await store.cycle(o.db, batch, claim)
    } catch (err) {
      if (batch.length > 0) o.logger.error('could not record delivery attempts; they will be retried when their lease expires', { error: String(err) })
      else throw err
    } finally {
      for (const done of settle) done()
      schedule(wait)
    }
    for (const job of jobs) _start(job)
  }

  function _start(job: store.Job): void {
    perHook.set(job.webhook_id, (perHook.get(job.webhook_id) ?? 0) + 1)
    sending++
    const p = _attempt(job).finally(() => inflight.delete(job.id))
    inflight.set(job.id, p)
  }

  function _free(job: store.Job): void {
    sending--
    const n = (perHook.get(job.webhook_id) ?? 1) - 1
    if (n > 0) perHook.set(job.webhook_id, n)
    else perHook.delete(job.webhook_id)
  }

  async function _attempt(job: store.Job): Promise<void> {
    let outcome: store.Outcome
    try {
      const at = o.clock.now()
      const result = await o.sender.send({
        url: job.url,
        body: job.payload,
        headers: {
          ...job.headers,
          'Content-Type': 'application/json',
          'User-Agent': o.userAgent,
          // The envelope's id and timestamp are the event row's (events/emit.ts writes both).
          'X-Webhook-ID': job.event_id,
          'X-Webhook-Timestamp': job.eventAt,
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
      outcome = { job, at: at.toISOString(), ...result, delivered, nextRetryAt: next, retries }
    } finally {
      _free(job)
    }
    if (closed) return // stopped meanwhile: the lease was given back, the attempt will be made again
    o.logger.debug('delivery attempt', { delivery_id: job.id, webhook_id: job.webhook_id, code: outcome.responseCode, delivered: outcome.delivered, error: outcome.error })
    const done = new Promise<void>((resolve) => recorded.push(resolve))
    outcomes.push(outcome)
    _runSoon()
    await done
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
      while (ticking) await ticking
      closed = true
      await o.sender.close()
    },
  }
}
