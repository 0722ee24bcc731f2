import { sql } from 'kysely'
import type { Db } from '../../db/connect.ts'
import { DROP_BATCH, dropInBatches } from '../../db/drop-queue.ts'
import { rerunRetryable } from './common.ts'
import type { Tx } from '../../db/tx.ts'

/** Tries of one batch that PostgreSQL keeps ending as a deadlock's victim. */
const _TRIES = 5

/**
 * One batch of a queue drop (engine/sqlite/drop-queue.ts has SQLite's), on the delivery pool
 * (bitmap and sequential scans off: engine.ts DELIVERY_PLANNER) or inside the delivery store's
 * cycle; how many deliveries it dropped.
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
 * PostgreSQL's Engine.dropQueue() (db/drop-queue.ts), on the delivery pool `delivery`: each
 * batch runs on its own at READ COMMITTED (it waits for a row the worker holds and takes it as
 * committed), run again if it is a deadlock's victim.
 */
export function dropQueue(delivery: Db, tenantId: string, webhookId: string, stopped?: () => boolean): Promise<void> {
  return dropInBatches(() => rerunRetryable(_TRIES, () => pgDropBatch(delivery, tenantId, webhookId)), stopped)
}
