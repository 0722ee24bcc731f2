import { ClaimFailed, type Disabled, type Job, type Outcome } from '../port.ts'
import { leaseUntil, type Core } from './core.ts'

export interface Cycles {
  /** A cycle now, or right after the one in progress: records the answers in, and reads the queue if it must (reads.ts). */
  run(): void
  /** One attempt's outcome, recorded by the next cycle with the others of its event-loop turn; settles once recorded (or failed to be). */
  record(outcome: Outcome): Promise<void>
  /** The cycle in progress, if any. */
  readonly ticking: Promise<void> | undefined
  /** Records what is left once the attempts have ended (stop()). */
  drain(): Promise<void>
}

/**
 * The worker's cycle: one store call that records the answers that came in since the last and,
 * when the queue must be read, claims due work from it with the slots free, dealt fairly. One
 * cycle at a time; a cycle asked for meanwhile runs right after. What it claims it starts
 * (`start`); a subscription it disabled has the rest of its queue dropped beside the loop.
 */
export function createCycles(core: Core, pollMs: number, start: (job: Job) => void): Cycles {
  const { store, logger, reads, running } = core
  let outcomes: Outcome[] = []
  let recorded: (() => void)[] = []
  let ticking: Promise<void> | undefined
  let again = false
  let soon = false

  function run(): void {
    if (ticking) {
      again = true
      return
    }
    ticking = tick().catch((err: unknown) => logger.error('delivery loop error', { error: String(err) })).finally(() => {
      ticking = undefined
      if (again) {
        again = false
        setImmediate(run)
      }
    })
  }

  /** Attempts finished in the same event-loop turn are recorded by one cycle. */
  function runSoon(): void {
    if (soon) return
    soon = true
    setImmediate(() => {
      soon = false
      run()
    })
  }

  async function tick(): Promise<void> {
    await core.ready
    const batch = outcomes
    const settle = recorded
    outcomes = []
    recorded = []
    let wait = pollMs
    let jobs: Job[] = []
    // Read the queue (and claim from it) when told to, or when an answer may have queued work
    // again: a failure (its retry), a manual attempt, an attempt that was in flight when work
    // came from elsewhere. A cycle with only other successes just records them.
    const requeues = batch.some((x) => x.job.manual > 0 || (running.get(x.job.id)?.at ?? 0) <= reads.plainWakeAt)
    const failed = batch.some((x) => !x.delivered)
    const read = reads.begin(requeues, failed, core.stopping)
    let c: ReturnType<typeof core.slots.claim> | undefined
    if (read) {
      const now = core.clock.now()
      c = core.slots.claim({ now, leaseUntil: leaseUntil(core, now), owner: core.owner }, (p) => {
        if (p.nextDueMs !== null) wait = Math.min(wait, p.nextDueMs)
        if (p.left) reads.left()
      })
    }
    core.recording = batch.map((x) => x.job.id)
    try {
      if (batch.length > 0 || c) {
        const done = await store.cycle(batch, c?.claim)
        jobs = done.jobs
        // A disabling also wrote its webhook.disabled event (§15), whose deliveries this cycle's
        // claim found due (a failure always reads the queue: reads.ts), or a later read will.
        for (const d of done.disabled) {
          logger.warn('webhook subscription disabled', { webhook_id: d.webhook_id, tenant_id: d.tenant_id, reason: d.reason, event_id: d.event_id })
          dropQueue(d)
        }
      }
    } catch (err) {
      if (read) reads.unread()
      if (err instanceof ClaimFailed) logger.error('could not claim due deliveries; the attempts were recorded, the queue is read again', { error: String(err.cause) })
      else if (batch.length > 0) logger.error('could not record delivery attempts; they will be retried when their lease expires', { error: String(err) })
      else throw err
    } finally {
      core.recording = []
      c?.release()
      for (const done of settle) done()
      if (read) reads.next(wait)
      // A store may leave the deliveries it records out of the claim beside it (PostgreSQL):
      // one queued again by this recording is claimed by the next cycle.
      if (requeues) {
        reads.whenFree()
        run()
      }
    }
    for (const job of jobs) start(job)
  }

  /**
   * The rest of the queue of a subscription a cycle disabled (the cycle dropped its first batch):
   * dropped in batches beside the loop. stop() ends it between two batches and waits for it;
   * what is left then, or if it fails, is dropped by the claims as it comes due.
   */
  function dropQueue(d: Disabled): void {
    const dropping: Promise<void> = store.dropQueue(d.tenant_id, d.webhook_id, () => core.stopping).catch((err: unknown) => {
      logger.warn('could not drop a disabled subscription\'s queue; the claims drop it as it comes due', { webhook_id: d.webhook_id, error: String(err) })
    }).finally(() => core.background.delete(dropping))
    core.background.add(dropping)
  }

  return {
    run,
    record(outcome) {
      const done = new Promise<void>((resolve) => recorded.push(resolve))
      outcomes.push(outcome)
      runSoon()
      return done
    },
    get ticking() { return ticking },
    async drain() {
      if (outcomes.length > 0) await tick().catch((err: unknown) => logger.error('could not record delivery attempts', { error: String(err) }))
    },
  }
}
