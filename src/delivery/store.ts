import { sql } from 'kysely'
import type { Db } from '../db/connect.ts'
import { exclusive, type SyncDb } from '../db/exclusive.ts'

/**
 * The delivery worker's SQL: record outcomes, find and claim due work, load what sending needs.
 * A worker cycle runs as one synchronous transaction (exclusive(): cached statements, no
 * kysely), because it is many small statements per delivery on the hottest loop of `serve`.
 */

export interface Claimed {
  id: string
  tenant_id: string
  webhook_id: string
  event_id: string
  attempts: number
  retries: number
  manual: number
  next_retry_at: string | null
  status: string
}

export interface Job extends Claimed {
  url: string
  secret: string
  headers: Record<string, string>
  retryCount: number
  payload: string
  eventAt: string
}

export interface QueuedHook {
  webhook_id: string
  /** The earliest due time of its queued deliveries that nobody holds a lease on; null: all are leased. */
  due: string | null
}

export interface Outcome {
  job: Job
  at: string
  responseCode: number | null
  durationMs: number
  error: string | null
  responseBody: string | null
  delivered: boolean
  /** When the next attempt is due (automatic retry or the schedule a manual attempt left alone). */
  nextRetryAt: string | null
  retries: number
}

/**
 * What to claim, given the subscriptions with queued work: at most `room` deliveries in all,
 * taken from `hooks` in their order, at most `limit` of each.
 */
export type Planner = (queued: QueuedHook[], now: string) => { room: number; hooks: { webhook_id: string; limit: number }[] }

/**
 * One transaction: records finished attempts, then (when `claim` is given) claims due,
 * unleased deliveries as the planner asks, leased until `leaseUntil`. The due deliveries of
 * a subscription that went inactive are dropped instead (nothing sent, nothing queued).
 */
export async function cycle(db: Db, outcomes: Outcome[], claim?: { now: string; leaseUntil: string; plan: Planner }): Promise<Job[]> {
  // Nothing to record: look first without the write lock (a wake often finds every
  // subscription with work at its limit, e.g. while receivers are slow).
  if (outcomes.length === 0) {
    if (!claim) return []
    const wanted = await exclusive(db, (q) => claim.plan(_queuedHooks(q, claim.now), claim.now))
    if (wanted.room <= 0 || wanted.hooks.length === 0) return []
  }
  return exclusive(db, (q) => {
    for (const o of outcomes) _record(q, o)
    const jobs: Job[] = []
    if (!claim) return jobs
    const { room, hooks } = claim.plan(_queuedHooks(q, claim.now), claim.now)
    let left = room
    for (const w of hooks) {
      if (left <= 0) break
      const claimed = _claim(q, w.webhook_id, Math.min(w.limit, left), claim.now, claim.leaseUntil)
      jobs.push(...claimed)
      left -= claimed.length
    }
    return jobs
  }, { write: true })
}

/**
 * Subscriptions with queued deliveries (due now or later), each with its earliest unleased due
 * time: one index seek per subscription (deliveries_webhook_due), however long the queues are.
 */
function _queuedHooks(q: SyncDb, now: string): QueuedHook[] {
  return q.all<QueuedHook>(`
    WITH RECURSIVE hooks(id) AS (
      SELECT (SELECT webhook_id FROM deliveries WHERE due_at IS NOT NULL ORDER BY webhook_id LIMIT 1)
      UNION ALL
      SELECT (SELECT webhook_id FROM deliveries WHERE due_at IS NOT NULL AND webhook_id > hooks.id ORDER BY webhook_id LIMIT 1)
      FROM hooks WHERE hooks.id IS NOT NULL)
    SELECT id AS webhook_id,
      (SELECT due_at FROM deliveries WHERE webhook_id = hooks.id AND due_at IS NOT NULL AND (locked_until IS NULL OR locked_until < ?)
        ORDER BY due_at LIMIT 1) AS due
    FROM hooks WHERE id IS NOT NULL`, now)
}

/**
 * Up to `limit` due, unleased deliveries of one subscription, oldest due first, with what
 * sending needs; none if the subscription is no longer active (its due ones are dropped).
 */
function _claim(q: SyncDb, webhookId: string, limit: number, now: string, leaseUntil: string): Job[] {
  const h = q.get<{ url: string; secret: string; headers: string; active: number; deleted_at: string | null; retry_count: number }>(
    'SELECT url, secret, headers, active, deleted_at, retry_count FROM webhooks WHERE id = ?', webhookId)
  const due = 'webhook_id = ? AND due_at IS NOT NULL AND due_at <= ? AND (locked_until IS NULL OR locked_until < ?)'
  if (!h || h.active !== 1 || h.deleted_at !== null) {
    q.run(`UPDATE deliveries SET due_at = NULL, next_retry_at = NULL, manual = 0, locked_until = NULL,
      status = CASE WHEN status = 'pending' THEN 'failed' ELSE status END WHERE ${due}`, webhookId, now, now)
    return []
  }
  const claimed = q.all<Claimed>(`
    UPDATE deliveries SET locked_until = ?
    WHERE id IN (SELECT id FROM deliveries WHERE ${due} ORDER BY due_at LIMIT ?)
    RETURNING id, tenant_id, webhook_id, event_id, attempts, retries, manual, next_retry_at, status`, leaseUntil, webhookId, now, now, limit)
  const headers = JSON.parse(h.headers) as Record<string, string>
  return claimed.map((c) => {
    const e = q.get<{ payload: string; created_at: string }>('SELECT payload, created_at FROM events WHERE id = ?', c.event_id)!
    return {
      ...c, url: h.url, secret: h.secret, headers, retryCount: h.retry_count, payload: e.payload, eventAt: e.created_at,
    }
  })
}

/** The attempt row and the delivery's new state. */
/**
 * Queue state after an attempt. `manual` counts retries asked for and not yet served; one asked
 * for while this attempt was in flight (manual > what was claimed) stays queued, due now.
 * Parameters: claimed manual, attempt time, next automatic time, claimed manual.
 */
const _AFTER_ATTEMPT = 'due_at = CASE WHEN manual > ? THEN ? ELSE ? END, manual = max(manual - ?, 0), locked_until = NULL'

function _record(q: SyncDb, o: Outcome): void {
  const attempt = o.job.attempts + 1
  q.run(`INSERT INTO delivery_attempts (delivery_id, attempt, tenant_id, at, trigger, response_code, duration_ms, error, response_body)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  o.job.id, attempt, o.job.tenant_id, o.at, o.job.manual ? 'manual' : 'auto', o.responseCode, o.durationMs, o.error, o.responseBody)
  if (o.delivered) {
    q.run(`UPDATE deliveries SET status = 'delivered', attempts = ?, retries = ?, response_code = ?, last_attempt_at = ?, delivered_at = ?,
      next_retry_at = ?, ${_AFTER_ATTEMPT} WHERE id = ?`,
    attempt, o.retries, o.responseCode, o.at, o.at, o.nextRetryAt, o.job.manual, o.at, o.nextRetryAt, o.job.manual, o.job.id)
  } else {
    q.run(`UPDATE deliveries SET status = 'failed', attempts = ?, retries = ?, response_code = ?, last_attempt_at = ?,
      next_retry_at = ?, ${_AFTER_ATTEMPT} WHERE id = ?`,
    attempt, o.retries, o.responseCode, o.at, o.nextRetryAt, o.job.manual, o.at, o.nextRetryAt, o.job.manual, o.job.id)
  }
}

/** Gives claimed work back (shutdown before it was sent): it is due again at once. */
export async function releaseJobs(db: Db, ids: string[]): Promise<void> {
  if (ids.length === 0) return
  await db.updateTable('deliveries').set({ locked_until: null })
    .where('id', 'in', sql<string>`(SELECT value FROM json_each(${JSON.stringify(ids)}))`).execute()
}

/** At start: leases of a previous process are void (one `serve` per database file). */
export async function releaseAllLeases(db: Db): Promise<void> {
  await db.updateTable('deliveries').set({ locked_until: null }).where('locked_until', 'is not', null).execute()
}
