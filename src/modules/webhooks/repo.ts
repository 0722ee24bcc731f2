import { sql } from 'kysely'
import type { Db } from '../../db/connect.ts'
import { dropQueue } from '../../db/drop-queue.ts'
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
 * lost 40 attempts in a row and answered 409 (BENCHMARKS.md, "Failing subscriptions paced").
 * Nothing is lost if the process stops before the drop is done: the worker drops what it finds
 * due for an inactive subscription.
 */
export function dropQueued(db: Db, tenantId: string, webhookId: string): Promise<void> {
  return dropQueue(db, tenantId, webhookId)
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
  createdAfter?: string
  after?: string
  limit: number
}

const _deliveries = listIndexes('deliveries', { served: [['webhook_id']] })

export function listDeliveries(db: Db, tenantId: string, f: DeliveryFilter): Promise<PageRows<DeliveryWithPayload>> {
  // A subscription alone is one index range (deliveries_tenant_webhook); a status, an event or a
  // time is read in windows under the scan budget (db/page-rows.ts).
  const served = !f.createdAfter && _deliveries.served([f.webhookId && 'webhook_id', f.status && 'status', f.event && 'event'].filter((c) => !!c) as string[])
  return readPageRows(f.limit, f.after, (after, n, floor) => {
    let q = db.selectFrom('deliveries').innerJoin('events', 'events.id', 'deliveries.event_id')
      .selectAll('deliveries').select('events.payload')
      .where('deliveries.tenant_id', '=', tenantId)
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

/**
 * A tenant's attempts as (bucket, duration, count, 2xx count) rows, the bucket being the first
 * `prefix` characters of the attempt time (13: the hour, 10: the day), read as `plan` says
 * (stats-plan.ts): attempt_stats for whole hours, delivery_attempts for parts of the edge hours
 * (added, or taken away from their hour's sums). One statement, so one snapshot: the sums and
 * the attempts agree. A duration may come back with a count of 0 (all of it taken away).
 */
export function attemptHistogram(db: Db, tenantId: string, o: { plan: StatsPlan; prefix: number; webhookId?: string }) {
  const p = sql.lit(o.prefix)
  const id = o.webhookId
  const parts = o.plan.raw.map((r) => sql`select substr(a.at, 1, ${p}) as b, a.duration_ms as d, ${sql.lit(r.sign)} as n,
      case when a.response_code between 200 and 299 then ${sql.lit(r.sign)} else 0 end as ok
    from delivery_attempts a where a.tenant_id = ${tenantId} and a.at >= ${r.since} and a.at < ${r.until}
    ${id ? sql`and exists (select 1 from deliveries d where d.id = a.delivery_id and d.webhook_id = ${id})` : sql``}`)
  const h = o.plan.hours
  if (h) {
    parts.unshift(sql`select substr(s.hour, 1, ${p}) as b, s.duration_ms as d, s.n, s.ok from attempt_stats s
      where s.tenant_id = ${tenantId} and s.hour >= ${h.from} and s.hour < ${h.to}${id ? sql` and s.webhook_id = ${id}` : sql``}`)
  }
  if (parts.length === 0) return Promise.resolve([])
  return sql<{ b: string; d: number; n: number; ok: number }>`select x.b, x.d, sum(x.n) as n, sum(x.ok) as ok
    from (${sql.join(parts, sql` union all `)}) x group by x.b, x.d`.execute(db).then((r) => r.rows)
}
