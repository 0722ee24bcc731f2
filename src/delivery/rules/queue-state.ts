import type { Outcome } from '../port.ts'

/**
 * A delivery's queue state: the columns of `deliveries` that recording an attempt, or dropping a
 * subscription's queue, may change. `due_at` is when it is next to be claimed (null: not
 * queued); `next_retry_at` is the automatic schedule shown to clients; `manual` counts manual
 * retries asked for and not yet served.
 */
export interface QueueState {
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  retries: number
  manual: number
  next_retry_at: string | null
  due_at: string | null
  delivered_at: string | null
  response_code: number | null
  last_attempt_at: string | null
  locked_by: string | null
  locked_until: string | null
}

/** What a store records of one outcome. */
export type Recorded = Pick<Outcome, 'at' | 'responseCode' | 'delivered' | 'nextRetryAt' | 'retries'> & { job: Pick<Outcome['job'], 'manual' | 'owner'> }

/**
 * The state after an attempt is recorded (CONTRACT §7, §11). Whoever holds the lease, the
 * attempt counts and a success marks the delivery `delivered`. The rest (a failure's status,
 * retries, schedule, manual retries, lease) is written only by the lease's holder: a recorder
 * that lost its lease meanwhile leaves it to the new holder, whose attempt decides. Held: the lease ends; a manual retry asked for while the attempt was
 * in flight (`manual` above what the job was claimed with) keeps it due at once, else it is due
 * at the automatic schedule (or not queued). A subscription no longer active gets nothing queued
 * (its queue was dropped when it stopped being active).
 *
 * The stores apply this in SQL, set-based (engine/sqlite/delivery-store.ts, engine/postgres/delivery-store.ts);
 * test/db/delivery-rules-agree.test.ts checks both against this function.
 */
export function afterAttempt(row: QueueState, o: Recorded, active: boolean): QueueState {
  const done = o.delivered ? { status: 'delivered' as const, delivered_at: o.at } : {}
  const counted = { attempts: row.attempts + 1, last_attempt_at: o.at, response_code: o.responseCode }
  if (row.locked_by !== o.job.owner) return { ...row, ...counted, ...done }
  const queue = active
    ? { next_retry_at: o.nextRetryAt, due_at: row.manual > o.job.manual ? o.at : o.nextRetryAt, manual: Math.max(row.manual - o.job.manual, 0) }
    : { next_retry_at: null, due_at: null, manual: 0 }
  return { ...row, ...counted, status: 'failed', ...done, retries: o.retries, ...queue, locked_by: null, locked_until: null }
}

/**
 * A queued delivery of a subscription that is no longer active, dropped (CONTRACT §7: "its
 * queued retries are dropped (records stay)"): nothing is due any more, and one never attempted
 * ends `failed`. Its lease is left alone: an attempt in flight is recorded by its holder.
 * Deliveries not queued are left as they are.
 */
export function dropQueued(row: QueueState): QueueState {
  if (row.due_at === null) return row
  return { ...row, due_at: null, next_retry_at: null, manual: 0, status: row.status === 'pending' ? 'failed' : row.status }
}

/**
 * Whether a claim at `now` may take a delivery: queued, due, and under no lease still running
 * (an expired one is anybody's). Times are ISO 8601 text of one form, compared as text, as the
 * stores' SQL compares them.
 */
export function isClaimable(row: QueueState, now: string): boolean {
  return row.due_at !== null && row.due_at <= now && (row.locked_until === null || row.locked_until < now)
}

/**
 * A claimable delivery once a claim takes it: leased to `owner` until `until` when its
 * subscription is active and not deleted; otherwise dropped instead (nothing sent, dropQueued()),
 * its expired lease cleared.
 */
export function claimedBy(row: QueueState, owner: string, until: string, live: boolean): QueueState {
  return live ? { ...row, locked_by: owner, locked_until: until } : { ...dropQueued(row), locked_by: null, locked_until: null }
}

/**
 * What a read of the queue reports of one subscription with queued deliveries (port.ts
 * QueuedWebhook), from those deliveries: the earliest due time among those under no lease still
 * running (null: every one is leased), and how many a claim at `now` could take, counted up to
 * `cap` (READY_CAP).
 */
export function queuedSummary(rows: Iterable<QueueState>, now: string, cap: number): { due: string | null; ready: number } {
  let due: string | null = null
  let ready = 0
  for (const r of rows) {
    if (r.due_at === null || (r.locked_until !== null && r.locked_until >= now)) continue
    if (due === null || r.due_at < due) due = r.due_at
    if (r.due_at <= now && ready < cap) ready++
  }
  return { due, ready }
}
