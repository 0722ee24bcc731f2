import type { Claim, CycleResult, DeliveryStore, Disabled, Job, Outcome, QueuedWebhook } from '../../src/delivery/port.ts'
import { READY_CAP } from '../../src/delivery/port.ts'
import type { Core } from '../../src/delivery/worker/core.ts'
import { createReads } from '../../src/delivery/worker/reads.ts'
import { createSlots } from '../../src/delivery/worker/slots.ts'
import { DEFAULT_SLOTS } from '../../src/delivery/worker.ts'
import type { SlotLimits } from '../../src/delivery/plan.ts'
import type { Sender, SendRequest, SendResult } from '../../src/delivery/send.ts'
import { createLogger } from '../../src/lib/logger.ts'

let _n = 0

/** A claimable delivery of `webhook` (tenant `tenant`), due now, never attempted. */
export function job(tenant: string, webhook: string, over: Partial<Job> = {}): Job {
  _n++
  return {
    id: `dlv_${_n}`, tenant_id: tenant, webhook_id: webhook, event_id: `evt_${_n}`, event: 'order.created', attempts: 0, retries: 0, manual: 0,
    next_retry_at: null, status: 'pending', owner: '', url: `http://127.0.0.1:9/${webhook}`, secret: 'fake-secret', headers: {}, retryCount: 5,
    payload: `{"n":${_n}}`, eventAt: '2026-11-29T08:00:00.000Z', ...over,
  }
}

/** One call of the fake store's cycle(): what it was given and what it answered. */
export interface CycleCall {
  outcomes: Outcome[]
  claim: Claim | undefined
  /** The subscriptions the planner was shown (a fast claim's `queued`, else the queue's). */
  shown: QueuedWebhook[]
  jobs: Job[]
}

/**
 * A delivery store in memory, for the worker's parts: a queue of due jobs claimed through the
 * claim's planner as a real store does (the subscriptions with queued work, each counted up to
 * READY_CAP, planned, then each dealt subscription's first jobs in queue order), every call noted.
 * `fail` makes the next cycle throw it; `disable` makes the next cycle that records answers
 * report those subscriptions disabled.
 */
export class FakeStore implements DeliveryStore {
  queue: Job[] = []
  cycles: CycleCall[] = []
  recovered: string[] = []
  released: string[][] = []
  renewed: { ids: string[]; until: string }[] = []
  dropped: string[] = []
  announced = 0
  listening = false
  heard: (() => void) | undefined
  fail: unknown = undefined
  disable: Disabled[] = []
  /** When set, cycle() waits for it before answering. */
  hold: Promise<void> | undefined

  async recover(owner: string): Promise<void> {
    this.recovered.push(owner)
  }

  async cycle(outcomes: Outcome[], claim?: Claim): Promise<CycleResult> {
    if (this.hold) await this.hold
    if (this.fail !== undefined) {
      const err = this.fail
      this.fail = undefined
      throw err
    }
    let jobs: Job[] = []
    let shown: QueuedWebhook[] = []
    if (claim) {
      const exclude = new Set(claim.exclude)
      const free = this.queue.filter((j) => !exclude.has(j.id))
      shown = claim.queued ?? _summary(free, claim.now)
      const dealt = new Map(claim.plan(shown, claim.now).map((h) => [h.webhook_id, h.limit]))
      jobs = free.filter((j) => {
        const n = dealt.get(j.webhook_id) ?? 0
        if (n <= 0) return false
        dealt.set(j.webhook_id, n - 1)
        return true
      }).map((j) => ({ ...j, owner: claim.owner }))
      const taken = new Set(jobs.map((j) => j.id))
      this.queue = this.queue.filter((j) => !taken.has(j.id))
    }
    this.cycles.push({ outcomes, claim, shown, jobs })
    const disabled = outcomes.length > 0 ? this.disable.splice(0) : []
    return { jobs, disabled }
  }

  async renew(ids: string[], _owner: string, until: string): Promise<void> {
    this.renewed.push({ ids, until })
  }

  async release(ids: string[]): Promise<void> {
    this.released.push(ids)
  }

  async dropQueue(_tenantId: string, webhookId: string): Promise<void> {
    this.dropped.push(webhookId)
  }

  async listen(wake: () => void): Promise<() => Promise<void>> {
    this.listening = true
    this.heard = wake
    return async () => { this.listening = false }
  }

  announce(): void {
    this.announced++
  }
}

function _summary(jobs: Job[], now: string): QueuedWebhook[] {
  const by = new Map<string, QueuedWebhook>()
  for (const j of jobs) {
    const q = by.get(j.webhook_id)
    if (q) q.ready = Math.min(q.ready + 1, READY_CAP)
    else by.set(j.webhook_id, { webhook_id: j.webhook_id, tenant_id: j.tenant_id, due: now, ready: 1 })
  }
  return [...by.values()]
}

/** A worker core over `store` with real slots and reads (`look` counts the looks asked for), started. */
export function fakeCore(store: DeliveryStore, o: { slots?: Partial<SlotLimits>; now?: Date } = {}): Core & { looks: { count: number } } {
  const looks = { count: 0 }
  const now = o.now ?? new Date('2026-11-29T08:00:00.000Z')
  return {
    owner: 'wrk_test',
    leaseMs: 15_000,
    store,
    clock: { now: () => now },
    logger: createLogger('silent'),
    slots: createSlots({ ...DEFAULT_SLOTS, ...o.slots }),
    reads: createReads(() => void looks.count++, () => store.announce?.()),
    ready: Promise.resolve(),
    running: new Map(),
    background: new Set(),
    recording: [],
    stopping: false,
    started: true,
    looks,
  }
}

/** A sender whose answers the test gives (answer()), noting every request; one that honours the abort signal unless told not to. */
export class FakeSender implements Sender {
  sent: { req: SendRequest; answer: (r: SendResult) => void }[] = []
  resets: string[] = []
  closed = false
  readonly o: { ignoreAbort?: boolean }
  constructor(o: { ignoreAbort?: boolean } = {}) {
    this.o = o
  }

  send(req: SendRequest, signal?: AbortSignal): Promise<SendResult> {
    return new Promise((resolve) => {
      this.sent.push({ req, answer: resolve })
      if (!this.o.ignoreAbort) signal?.addEventListener('abort', () => resolve({ responseCode: null, durationMs: 0, error: 'aborted', responseBody: null, aborted: true }))
    })
  }

  /** Answers the `i`th request sent (0: the first). */
  answer(i: number, r: Partial<SendResult> & { responseCode: number | null }): void {
    this.sent[i]!.answer({ durationMs: 5, error: null, responseBody: null, ...r })
  }

  reset(key: string): void {
    this.resets.push(key)
  }

  async close(): Promise<void> {
    this.closed = true
  }
}
