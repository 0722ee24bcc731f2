import { sql, type RawBuilder } from 'kysely'
import type { Db } from '../../db/connect.ts'
import type { Engine } from '../../engine/port.ts'
import type { DeliveryRow, WebhookRow } from '../../db/schema.ts'
import { readPageRows, type PageRows } from '../../db/page-rows.ts'
import { listIndexes, tenantTable, windowFloor } from '../../db/tenant-table.ts'
import type { Tx } from '../../db/tx.ts'
import type { StatsPlan } from './stats-plan.ts'

/** Every query starts from the tenant; deleted subscriptions are not found. */
export const webhooks = tenantTable('webhooks')

export function findWebhook(db: Db | Tx, tenantId: string, id: string): Promise<WebhookRow | undefined> {
  return webhooks.find(db, tenantId, id, { deleted_at: null })
}

/** Subscriptions of a tenant that are not deleted (active or not): what --max-webhooks counts. */
export async function countWebhooks(db: Db | Tx, tenantId: string): Promise<number> {
  const r = await db.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId).where('deleted_at', 'is', null).executeTakeFirstOrThrow()
  return Number(r.n)
}

export function listWebhooks(db: Db, tenantId: string, after: string | undefined, limit: number): Promise<WebhookRow[]> {
  return webhooks.list(db, tenantId, { eq: { deleted_at: null }, after, limit })
}

/**
 * Queued work of a subscription that was just deactivated or deleted (that change committed) is
 * dropped: never-attempted deliveries end failed, retries are unscheduled — in batches, other
 * requests served between two (db/drop-queue.ts); answered once all of it is dropped.
 *
 * After the change's own transaction, not in it: on PostgreSQL a SERIALIZABLE transaction that
 * updates a whole queue conflicts with the worker, which keeps claiming and recording that
 * subscription's deliveries until it sees it inactive — with a failing receiver's backlog, PATCH
 * lost 40 attempts in a row and answered 409.
 * Nothing is lost if the process stops before the drop is done: the worker drops what it finds
 * due for an inactive subscription.
 */
export function dropQueued(engine: Engine, tenantId: string, webhookId: string): Promise<void> {
  return engine.dropQueue(tenantId, webhookId)
}

export type DeliveryWithPayload = DeliveryRow & { payload: string }

export function findDelivery(db: Db | Tx, tenantId: string, id: string): Promise<DeliveryWithPayload | undefined> {
  return db.selectFrom('deliveries').innerJoin('events', 'events.id', 'deliveries.event_id')
    .selectAll('deliveries').select('events.payload')
    .where('deliveries.tenant_id', '=', tenantId).where('deliveries.id', '=', id).executeTakeFirst()
}

export interface DeliveryFilter {
  webhookId?: string
  status?: string
  event?: string
  eventId?: string
  createdAfter?: string
  after?: string
  limit: number
}

const _deliveries = listIndexes('deliveries', { served: [['webhook_id']] })

export function listDeliveries(db: Db, tenantId: string, f: DeliveryFilter): Promise<PageRows<DeliveryWithPayload>> {
  // A subscription alone is one index range (deliveries_tenant_webhook); a status, an event or a
  // time is read in windows under the scan budget (db/page-rows.ts). One event's deliveries are
  // read whole through deliveries_event, whatever else filters them: one per subscription it was
  // sent to, so at most --max-webhooks, never the tenant's history.
  const served = !!f.eventId || (!f.createdAfter && _deliveries.served([f.webhookId && 'webhook_id', f.status && 'status', f.event && 'event'].filter((c) => !!c) as string[]))
  return readPageRows(f.limit, f.after, (after, n, floor) => {
    let q = db.selectFrom('deliveries').innerJoin('events', 'events.id', 'deliveries.event_id')
      .selectAll('deliveries').select('events.payload')
    // One event's deliveries through deliveries_event: the tenant compared as an expression no
    // index serves, or SQLite (no statistics) walks the tenant's deliveries newest first through
    // deliveries_tenant, which serves the ORDER BY and the LIMIT, until it has found them — the
    // tenant's whole history for an old event (test/db/delivery-event-plans.test.ts).
    if (f.eventId) q = q.where(sql<string>`deliveries.tenant_id || ''`, '=', tenantId).where('deliveries.event_id', '=', f.eventId)
    else q = q.where('deliveries.tenant_id', '=', tenantId)
    if (f.webhookId) q = q.where('deliveries.webhook_id', '=', f.webhookId)
    if (f.status) q = q.where('deliveries.status', '=', f.status)
    if (f.event) q = q.where('deliveries.event', '=', f.event)
    if (f.createdAfter) q = q.where('deliveries.created_at', '>', f.createdAfter)
    if (after) q = q.where('deliveries.id', '<', after)
    if (floor) q = q.where('deliveries.id', '>=', floor)
    return q.orderBy('deliveries.id', 'desc').limit(n).execute()
  }, served ? undefined : windowFloor(db, 'deliveries', tenantId, f.webhookId ? { webhook_id: f.webhookId } : {}))
}

export function attemptsOf(db: Db | Tx, tenantId: string, deliveryId: string) {
  return db.selectFrom('delivery_attempts').selectAll()
    .where('tenant_id', '=', tenantId).where('delivery_id', '=', deliveryId).orderBy('attempt').execute()
}

/** At most `limit` attempts numbered after `after` and at most `last`, in order (a seek on the primary key). */
export function attemptWindow(db: Db, tenantId: string, deliveryId: string, o: { after: number; last: number; limit: number }) {
  return db.selectFrom('delivery_attempts').selectAll()
    .where('tenant_id', '=', tenantId).where('delivery_id', '=', deliveryId)
    .where('attempt', '>', o.after).where('attempt', '<=', o.last).orderBy('attempt').limit(o.limit).execute()
}

export type HistogramRow = { b: string; d: number; n: number; ok: number }

/** Where attemptHistogram() puts what it reads. */
export interface HistogramSink {
  /** Rows to count `sign` times each (−1: attempts taken away from their hour's sums); may take turns of the event loop. */
  add(rows: HistogramRow[], sign: 1 | -1): Promise<void>
  /** Every row of the buckets before `bucket` (a bucket of `prefix` characters) has been added. */
  complete(bucket: string): Promise<void>
}

/**
 * A tenant's attempts as (bucket, duration, count, 2xx count) rows, the bucket being the first
 * `prefix` characters of the attempt time (13: the hour, 10: the day), read as `plan` says
 * (stats-plan.ts): attempt_stats for whole hours, delivery_attempts for parts of the edge hours
 * (added, or taken away from their hour's sums). Rows go to `sink`; the same (bucket, duration)
 * may come in several, and a duration may sum to a count of 0 (all of it taken away).
 *
 * What is settled — hours that ended, and edge attempts made, before `settled` (no attempt made
 * then can still be recorded: the delivery timeout and a margin ago) — is read in windows, a turn
 * of the event loop between two, each as long as EDGE_WINDOW_MS of reading (and adding) at the
 * last one's pace: hours a window of whole hours, edges a window of time. In one statement, a
 * week of a tenant's sums (50 subscriptions, 450 distinct durations an hour: 3.3 M rows) held
 * every other tenant's requests on SQLite for 1.6 s, and half an hour of its attempts (a million
 * an hour) for 0.2 s; on PostgreSQL, a thousand days of
 * (day, duration) sums — 2 M rows to receive — held serve's event loop for 120–160 ms at a time
 * while node-postgres parsed them. Settled rows no longer change, so reading
 * them over several statements gives what one would (retention deleting some meanwhile aside).
 * The rest — the hours still being added to and the edges' last minutes — is one statement, so
 * one snapshot: sums and the attempts taken away from them agree. It is read first, the edges
 * next, then the hours oldest first, each window telling the sink which buckets are complete: a
 * bucket's sums are kept only until then (a thousand days of a busy tenant are millions of
 * (day, duration) pairs).
 */
export async function attemptHistogram(db: Db, tenantId: string, o: { plan: StatsPlan; prefix: number; webhookId?: string; settled: string }, sink: HistogramSink): Promise<void> {
  const p = sql.lit(o.prefix)
  const id = o.webhookId
  const { settled } = o
  const settledHour = settled.slice(0, 13) // hours before it ended before `settled`
  const recent: StatsPlan['raw'] = []
  const older: StatsPlan['raw'] = []
  for (const r of o.plan.raw) {
    if (r.since < settled) older.push({ ...r, until: r.until < settled ? r.until : settled })
    if (r.until > settled) recent.push({ ...r, since: r.since > settled ? r.since : settled })
  }
  const h = o.plan.hours
  const hoursRecent = h && h.to > settledHour ? { from: h.from > settledHour ? h.from : settledHour, to: h.to } : undefined
  const hoursOlder = h && h.from < settledHour ? { from: h.from, to: h.to < settledHour ? h.to : settledHour } : undefined

  const sums = (from: string, to: string) => sql<HistogramRow>`select substr(s.hour, 1, ${p}) as b, s.duration_ms as d, sum(s.n) as n, sum(s.ok) as ok from attempt_stats s
    where s.tenant_id = ${tenantId} and s.hour >= ${from} and s.hour < ${to}${id ? sql` and s.webhook_id = ${id}` : sql``} group by b, d`
  const attempts = (since: string, until: string, n: RawBuilder<unknown>, ok: RawBuilder<unknown>) => sql`select substr(a.at, 1, ${p}) as b, a.duration_ms as d, ${n} as n, ${ok} as ok
    from delivery_attempts a where a.tenant_id = ${tenantId} and a.at >= ${since} and a.at < ${until}
    ${id ? sql`and exists (select 1 from deliveries d where d.id = a.delivery_id and d.webhook_id = ${id})` : sql``}`
  const ok2xx = (sign: number) => sql`case when a.response_code between 200 and 299 then ${sql.lit(sign)} else 0 end`
  const parts = recent.map((r) => attempts(r.since, r.until, sql.lit(r.sign), ok2xx(r.sign)))
  if (hoursRecent) parts.unshift(sums(hoursRecent.from, hoursRecent.to))
  if (parts.length > 0) {
    await sink.add((await sql<HistogramRow>`select x.b, x.d, sum(x.n) as n, sum(x.ok) as ok
      from (${sql.join(parts, sql` union all `)}) x group by x.b, x.d`.execute(db)).rows, 1)
  }
  for (const r of older) {
    await timeWindows(r.since, r.until, async (since, until) => {
      const q = sql<HistogramRow>`select x.b, x.d, count(*) as n, sum(x.ok) as ok from (${attempts(since, until, sql.lit(1), ok2xx(1))}) x group by x.b, x.d`
      await sink.add((await q.execute(db)).rows, r.sign)
    })
  }
  if (hoursOlder) {
    await timeWindows(`${hoursOlder.from}:00:00.000Z`, `${hoursOlder.to}:00:00.000Z`, async (from, to) => {
      await sink.add((await sums(from.slice(0, 13), to.slice(0, 13)).execute(db)).rows, 1)
      await sink.complete(to.slice(0, o.prefix))
    }, { first: _H, least: _H })
  }
}

const _H = 3_600_000

/** What one window of a stats read should take. */
export const EDGE_WINDOW_MS = 5

/**
 * Calls `read` for consecutive windows [since, until) of time covering the range, oldest first, a
 * turn of the event loop before each but the first: each twice as long as the last, or as long as
 * EDGE_WINDOW_MS of reading at the last one's pace, in whole multiples of `least` ms (1; an hour
 * for whole hours), the first `first` ms long (a second: of the most attempts a tenant can make,
 * a few ms to read). `now` times the reads.
 */
export async function timeWindows(since: string, until: string, read: (since: string, until: string) => Promise<void>,
  o: { first?: number; least?: number; now?: () => number } = {}): Promise<void> {
  const { first: span0 = 1_000, least = 1, now = performance.now.bind(performance) } = o
  const end = Date.parse(until)
  let from = Date.parse(since)
  let span = span0
  for (let first = true; from < end; first = false) {
    if (!first) await new Promise((resolve) => setImmediate(resolve))
    const to = Math.min(end, from + span)
    const started = now()
    await read(new Date(from).toISOString(), to === end ? until : new Date(to).toISOString())
    const took = now() - started
    span = Math.max(least, Math.floor(Math.min(span * 2, took > 0 ? (span * EDGE_WINDOW_MS) / took : Infinity) / least) * least)
    from = to
  }
}
