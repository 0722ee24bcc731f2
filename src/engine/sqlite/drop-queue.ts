import type { Db } from '../../db/connect.ts'
import { DROP_BATCH, dropInBatches } from '../../db/drop-queue.ts'
import { exclusive } from '../../db/exclusive.ts'

/**
 * One batch of a queue drop (parameters: webhook id, webhook id, tenant id): the first
 * DROP_BATCH entries of the subscription's range of deliveries_webhook_due, read from the index
 * alone (rowids), and nothing unless the subscription is the tenant's and inactive. (With the
 * tenant compared on each delivery, the planner may take deliveries_tenant_webhook and sort the
 * whole queue for each batch: PostgreSQL did.) `UPDATE OR FAIL` keeps no statement journal of
 * the pages it changes, which inside a transaction SQLite otherwise holds in memory (+14 MB of
 * peak RSS for 4,000 queued deliveries: delivery-store.ts _claim()); it cannot fail a CHECK,
 * and if it failed anyway its whole transaction would be rolled back. Also run by the delivery
 * store's cycle that disables a subscription.
 */
export const SQLITE_DROP_BATCH = `UPDATE OR FAIL deliveries SET due_at = NULL, next_retry_at = NULL, manual = 0,
  status = CASE WHEN status = 'pending' THEN 'failed' ELSE status END
  WHERE rowid IN (SELECT rowid FROM deliveries WHERE webhook_id = ? AND due_at IS NOT NULL ORDER BY due_at LIMIT ${DROP_BATCH})
  AND EXISTS (SELECT 1 FROM webhooks WHERE id = ? AND tenant_id = ? AND (active = 0 OR deleted_at IS NOT NULL))`

/** SQLite's Engine.dropQueue() (db/drop-queue.ts): each batch its own write transaction. */
export function dropQueue(db: Db, tenantId: string, webhookId: string, stopped?: () => boolean): Promise<void> {
  return dropInBatches(async () => (await exclusive(db, (q) => q.run(SQLITE_DROP_BATCH, webhookId, webhookId, tenantId), { write: true })).changes, stopped)
}
