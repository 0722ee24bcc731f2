import { sql } from 'kysely'
import { deliveryDbOf, isPostgres, type Db } from './connect.ts'
import { exclusive } from './exclusive.ts'
import { rerunRetryable } from './pg-common.ts'
import type { Tx } from './tx.ts'

/**
 * Deliveries one statement of a queue drop changes at most. A subscription whose receiver has
 * failed for days may hold hundreds of thousands of queued retries: dropped in one statement,
 * 100,000 of them held SQLite — and so every other tenant's requests — for 250–270 ms
 * on SQLite; 2,000 take 5–9 ms.
 */
export const DROP_BATCH = 2_000

/** Tries of one batch that PostgreSQL keeps ending as a deadlock's victim. */
const _TRIES = 5

/**
 * SQLite: one batch of a queue drop (parameters: webhook id, webhook id, tenant id): the first
 * DROP_BATCH entries of the subscription's range of deliveries_webhook_due, read from the index
 * alone (rowids), and nothing unless the subscription is the tenant's and inactive. (With the
 * tenant compared on each delivery, the planner may take deliveries_tenant_webhook and sort the
 * whole queue for each batch: PostgreSQL did.) `UPDATE OR FAIL` keeps no statement journal of
 * the pages it changes, which inside a transaction SQLite otherwise holds in memory (+14 MB of
 * peak RSS for 4,000 queued deliveries: db/delivery-store.ts _claim()); it cannot fail a CHECK,
 * and if it failed anyway its whole transaction would be rolled back. Also run by the delivery
 * store's cycle that disables a subscription.
 */
export const SQLITE_DROP_BATCH = `UPDATE OR FAIL deliveries SET due_at = NULL, next_retry_at = NULL, manual = 0,
  status = CASE WHEN status = 'pending' THEN 'failed' ELSE status END
  WHERE rowid IN (SELECT rowid FROM deliveries WHERE webhook_id = ? AND due_at IS NOT NULL ORDER BY due_at LIMIT ${DROP_BATCH})
  AND EXISTS (SELECT 1 FROM webhooks WHERE id = ? AND tenant_id = ? AND (active = 0 OR deleted_at IS NOT NULL))`

/**
 * PostgreSQL: the same batch, on the delivery pool (bitmap and sequential scans off: connect.ts
 * deliveryDbOf()) or inside the delivery store's cycle; how many deliveries it dropped.
 */
export async function pgDropBatch(db: Db | Tx, tenantId: string, webhookId: string): Promise<number> {
  const r = await sql`update deliveries set due_at = null, next_retry_at = null, manual = 0,
      status = case when status = 'pending' then 'failed' else status end
    where id = any(array(select id from deliveries where webhook_id = ${webhookId} and due_at is not null
      order by due_at limit ${sql.lit(DROP_BATCH)}))
    and exists (select 1 from webhooks where id = ${webhookId} and tenant_id = ${tenantId} and (active = 0 or deleted_at is not null))`.execute(db)
  return Number(r.numAffectedRows ?? 0)
}

/**
 * Drops the queue of a subscription that is no longer active (deactivated, deleted, disabled by
 * endpoint health; that change committed): its queued deliveries, due now or later, are
 * unscheduled, and those never attempted end `failed` (CONTRACT §7). In statements of at most
 * DROP_BATCH deliveries, oldest due first (deliveries_webhook_due), each on a turn of the event
 * loop of its own, other requests served between two. Each statement checks that the
 * subscription is still inactive, so one made active again meanwhile keeps what is still queued
 * and what it queues from then on. Leases are left as they are: an attempt in flight is recorded
 * by its holder, which finds the subscription inactive.
 *
 * `stopped()` ends it between two batches (the worker's stop: what is left is dropped by the
 * claims as it comes due). On SQLite each batch is its own write transaction. On PostgreSQL each
 * runs on its own, on the delivery pool, at READ COMMITTED (it waits for a row the worker holds
 * and takes it as committed), run again if it is a deadlock's victim.
 */
export async function dropQueue(db: Db, tenantId: string, webhookId: string, stopped: () => boolean = () => false): Promise<void> {
  const pg = isPostgres(db)
  const delivery = deliveryDbOf(db)
  for (;;) {
    // Each batch on a turn of the event loop of its own: the first too (the worker starts a drop
    // right after the cycle that dropped the first batch).
    await new Promise((resolve) => setImmediate(resolve))
    if (stopped()) return
    const n = pg ? await rerunRetryable(_TRIES, () => pgDropBatch(delivery, tenantId, webhookId))
      : (await exclusive(db, (q) => q.run(SQLITE_DROP_BATCH, webhookId, webhookId, tenantId), { write: true })).changes
    if (n < DROP_BATCH) return
  }
}
