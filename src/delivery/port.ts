/**
 * The delivery worker's port: everything it needs of a database, and nothing else. The worker
 * (worker.ts) decides what to send and when; a store keeps the queue. Each engine's adapter
 * builds one (Engine.deliveryStore(): engine/sqlite/delivery-store.ts, engine/postgres/delivery-store.ts).
 *
 * Leases. A claimed delivery carries `locked_by` (the worker's owner id) and `locked_until`.
 * Nobody else claims it before `locked_until`; the holder renews its leases while attempts are
 * in flight, so a live worker never loses one, and a worker that dies loses them when they
 * expire (then any worker claims the delivery again: at-least-once). Recording an outcome
 * clears the lease only if the recorder still holds it. A delivery may also be written already
 * leased, by the transaction that queues it (fan-out.ts, under the committing process's
 * worker's lease()): the same lease, without the claim.
 */

export interface Claimed {
  id: string
  tenant_id: string
  webhook_id: string
  event_id: string
  /** The event name. */
  event: string
  attempts: number
  retries: number
  /** Manual retries asked for and not yet served, as claimed. */
  manual: number
  next_retry_at: string | null
  status: string
}

/** A lease a worker offers for deliveries about to be written (worker.ts lease()): they are written already claimed by it. */
export interface Lease {
  owner: string
  until: string
  /**
   * Subscriptions whose deliveries are written without it: those that cannot start an attempt
   * now (at their limit, or paced and in their pause). Leased, each would be given back by a
   * statement of its own; unleased, a read of the queue takes them when they can (worker.ts).
   */
  skip?: readonly string[]
}

/** A claimed delivery with what sending needs. */
export interface Job extends Claimed {
  /** The worker holding the lease. */
  owner: string
  url: string
  secret: string
  headers: Record<string, string>
  retryCount: number
  payload: string
  eventAt: string
}

/** A subscription with queued deliveries. */
export interface QueuedWebhook {
  webhook_id: string
  tenant_id: string
  /** The earliest due time of its queued deliveries that nobody holds a lease on; null: all are leased. */
  due: string | null
  /** How many of them are due now (counted up to READY_CAP). */
  ready: number
}

/** A store counts a subscription's ready deliveries up to this (more than a subscription may have in flight). */
export const READY_CAP = 32

export interface Outcome {
  job: Job
  at: string
  responseCode: number | null
  durationMs: number
  error: string | null
  responseBody: string | null
  delivered: boolean
  /** When the next attempt is due (automatic retry, or the schedule a manual attempt left alone). */
  nextRetryAt: string | null
  retries: number
}

/**
 * What to claim, given the subscriptions with queued work: up to `limit` due deliveries of
 * each listed subscription, in list order (delivery/plan.ts decides, fairly).
 */
export type Planner = (queued: QueuedWebhook[], now: string) => { webhook_id: string; limit: number }[]

export interface Claim {
  now: string
  leaseUntil: string
  owner: string
  plan: Planner
  /**
   * The subscriptions to plan from instead of reading the queue: those a commit in this process
   * has just queued deliveries for (the worker's fast path). The claim itself checks every row
   * as always, so a stale or generous entry only claims less.
   */
  queued?: QueuedWebhook[]
  /** Deliveries never to claim, whatever their lease says: the worker's fast claim passes those whose answers a cycle beside it is recording. */
  exclude?: string[]
}

/**
 * A subscription the store disabled while recording (endpoint health, CONTRACT §11), and the
 * `webhook.disabled` event it wrote in the same transaction (§15: webhook-disabled.ts, through
 * the engine's outbox writer), whose deliveries the same cycle's claim finds due.
 */
export interface Disabled {
  webhook_id: string
  tenant_id: string
  reason: 'failing' | 'gone'
  event_id: string
}

export interface CycleResult {
  jobs: Job[]
  disabled: Disabled[]
}

/**
 * What a cycle throws when it recorded the outcomes it was given but could not claim (a store
 * that runs the two side by side: PostgreSQL). Nothing of the batch is sent again; the worker
 * reads the queue again.
 */
export class ClaimFailed extends Error {
  constructor(cause: unknown) {
    super(`could not claim due deliveries: ${String(cause)}`, { cause })
    this.name = 'ClaimFailed'
  }
}

/**
 * Endpoint health, applied by a store as it records outcomes (CONTRACT §11): a success clears
 * the subscription's `failing_since`; a failure sets it if unset; a 410 answer disables the
 * subscription at once (`gone`), and a failure when `failing_since` is at least
 * `disableAfterMs` old disables it (`failing`; 0 = never). Disabling makes it inactive, sets
 * `disabled_at`/`disabled_reason`, drops the first DROP_BATCH of its queued work
 * (db/drop-queue.ts) and writes the `webhook.disabled` event (webhook-disabled.ts), all in the
 * recording transaction; the worker then drops the rest (DeliveryStore.dropQueue()). The verdict
 * itself is rules/health.ts endpointHealth().
 */
export interface HealthPolicy {
  disableAfterMs: number
}

export interface DeliveryStore {
  /**
   * At start, before the first cycle: make work that a previous holder left in flight claimable.
   * A store that knows no other worker can be alive (SQLite: engine/sqlite/process-lock.ts) frees every
   * lease at once; others let leases expire.
   */
  recover(owner: string): Promise<void>
  /**
   * Records finished attempts (attempt row + the delivery's new state) and then, when `claim`
   * is given, leases the due, unleased deliveries the planner asks for — atomically where the
   * engine allows. Due deliveries of a subscription that is no longer active are dropped instead
   * (nothing sent; never-attempted ones end `failed`). An outcome for a delivery already gone
   * (e.g. pruned) is ignored.
   */
  cycle(outcomes: Outcome[], claim?: Claim): Promise<CycleResult>
  /** Extends `owner`'s leases on these deliveries (attempts still in flight). */
  renew(ids: string[], owner: string, until: string): Promise<void>
  /** Gives `owner`'s claims back unsent (shutdown): due again at once, for any worker. */
  release(ids: string[], owner: string): Promise<void>
  /**
   * Drops the whole queue of a subscription that is no longer active (one a cycle disabled), like
   * a deactivation over the API does: in statements of a bounded size, other work served between
   * two (db/drop-queue.ts); ends between two once `stopped()` says so.
   */
  dropQueue(tenantId: string, webhookId: string, stopped: () => boolean): Promise<void>
  /** Wake-ups from other processes (new work committed elsewhere); returns a stop function. Optional. */
  listen?(wake: () => void): Promise<() => Promise<void>>
  /** Tells the other processes' listen() that due work is waiting that this process cannot take now (PostgreSQL NOTIFY). Optional. */
  announce?(): void
}
