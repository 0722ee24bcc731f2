import { sql } from 'kysely'
import type { Db } from '../db/connect.ts'

/** The delivery worker's SQL: claim due work, load what sending needs, record outcomes. */

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
  /** false when the subscription was deactivated or deleted after the delivery was queued. */
  live: boolean
  payload: string
  eventAt: string
}

/** Due deliveries not leased by anyone, oldest due first, leased until `leaseUntil`. */
export async function claimDue(db: Db, now: string, leaseUntil: string, limit: number, skipWebhooks: string[]): Promise<Job[]> {
  const claimed = await sql<Claimed>`
    UPDATE deliveries SET locked_until = ${leaseUntil}
    WHERE id IN (
      SELECT id FROM deliveries
      WHERE due_at IS NOT NULL AND due_at <= ${now}
        AND (locked_until IS NULL OR locked_until < ${now})
        AND webhook_id NOT IN (SELECT value FROM json_each(${JSON.stringify(skipWebhooks)}))
      ORDER BY due_at LIMIT ${limit})
    RETURNING id, tenant_id, webhook_id, event_id, attempts, retries, manual, next_retry_at, status`.execute(db)
  if (claimed.rows.length === 0) return []
  const ids = (xs: string[]) => JSON.stringify([...new Set(xs)])
  const hooks = await db.selectFrom('webhooks').select(['id', 'url', 'secret', 'headers', 'active', 'deleted_at', 'retry_count'])
    .where('id', 'in', sql<string>`(SELECT value FROM json_each(${ids(claimed.rows.map((c) => c.webhook_id))}))`).execute()
  const events = await db.selectFrom('events').select(['id', 'payload', 'created_at'])
    .where('id', 'in', sql<string>`(SELECT value FROM json_each(${ids(claimed.rows.map((c) => c.event_id))}))`).execute()
  const hookById = new Map(hooks.map((h) => [h.id, h]))
  const eventById = new Map(events.map((e) => [e.id, e]))
  return claimed.rows.map((c) => {
    const h = hookById.get(c.webhook_id)!
    const e = eventById.get(c.event_id)!
    return {
      ...c,
      url: h.url,
      secret: h.secret,
      headers: JSON.parse(h.headers) as Record<string, string>,
      retryCount: h.retry_count,
      live: h.active === 1 && h.deleted_at === null,
      payload: e.payload,
      eventAt: e.created_at,
    }
  })
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

/** Records a batch of finished attempts in one transaction: the attempt row and the delivery's new state. */
export async function recordOutcomes(db: Db, outcomes: Outcome[]): Promise<void> {
  if (outcomes.length === 0) return
  await db.transaction().execute(async (tx) => {
    for (const o of outcomes) {
      const attempt = o.job.attempts + 1
      await tx.insertInto('delivery_attempts').values({
        delivery_id: o.job.id, attempt, tenant_id: o.job.tenant_id, at: o.at, trigger: o.job.manual ? 'manual' : 'auto',
        response_code: o.responseCode, duration_ms: o.durationMs, error: o.error, response_body: o.responseBody,
      }).execute()
      await tx.updateTable('deliveries').set({
        status: o.delivered ? 'delivered' : 'failed',
        attempts: attempt,
        retries: o.retries,
        response_code: o.responseCode,
        last_attempt_at: o.at,
        delivered_at: o.delivered ? o.at : undefined,
        next_retry_at: o.nextRetryAt,
        // A manual retry asked for while this attempt was in flight stays queued, due now.
        due_at: sql<string | null>`CASE WHEN manual > ${o.job.manual} THEN ${o.at} ELSE ${o.nextRetryAt} END`,
        manual: sql<number>`max(manual - ${o.job.manual}, 0)`,
        locked_until: null,
      }).where('id', '=', o.job.id).execute()
    }
  })
}

/** A delivery whose subscription went inactive: nothing is sent, nothing stays queued. */
export async function dropJob(db: Db, job: Job): Promise<void> {
  await db.updateTable('deliveries')
    .set({ due_at: null, next_retry_at: null, manual: 0, locked_until: null, status: job.status === 'pending' ? 'failed' : job.status })
    .where('id', '=', job.id).execute()
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

/** When the next queued delivery falls due, if any. */
export async function nextDueAt(db: Db): Promise<string | null> {
  const r = await db.selectFrom('deliveries').select((eb) => eb.fn.min('due_at').as('due')).where('due_at', 'is not', null).where('locked_until', 'is', null).executeTakeFirst()
  return (r?.due as string | null | undefined) ?? null
}
