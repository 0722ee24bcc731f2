import type { ExpressionBuilder } from 'kysely'
import type { Db } from '../db/connect.ts'
import { rerunRetryable } from '../db/pg-common.ts'
import type { Database } from '../db/schema.ts'

export interface RequeueFilter {
  /** Only these deliveries (any tenant: the CLI is the operator's tool). */
  ids?: string[]
  webhookId?: string
  since?: string
  status?: 'failed' | 'delivered'
}

/**
 * Queues an immediate new attempt ("manual") for delivered or failed records whose
 * subscription is still active. The automatic retry schedule is left as it is: after a
 * manual attempt fails, the next automatic retry (if any) keeps its time. `manual` counts
 * requests not yet served, so one made while an attempt is in flight is not lost (the worker
 * subtracts what it claimed). Returns the ids queued.
 */
export async function requeueDeliveries(db: Db, filter: RequeueFilter, now: Date): Promise<string[]> {
  // On PostgreSQL the statement takes its rows in its own order while the worker records answers
  // in another: one that ends as a deadlock's victim is run again (one statement: nothing of the
  // failed try remains).
  const rows = await rerunRetryable(_TRIES, () => db.updateTable('deliveries')
    .set((eb) => ({ due_at: now.toISOString(), manual: eb('manual', '+', 1) }))
    .where(_matching(filter))
    .returning('id')
    .execute())
  return rows.map((r) => r.id)
}

/** Tries of a requeue that PostgreSQL keeps ending as a deadlock's victim (each costs its deadlock_timeout, 1 s). */
const _TRIES = 5

/** How many records `requeueDeliveries` would queue with this filter now; changes nothing. */
export async function countRequeueable(db: Db, filter: RequeueFilter): Promise<number> {
  const row = await db.selectFrom('deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(_matching(filter))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The one definition of "requeueable" that both the update and the count use. */
function _matching(filter: RequeueFilter) {
  return (eb: ExpressionBuilder<Database, 'deliveries'>) => {
    const all = [
      eb('status', 'in', filter.status ? [filter.status] : ['failed', 'delivered']),
      eb('webhook_id', 'in', eb.selectFrom('webhooks').select('id').where('active', '=', 1).where('deleted_at', 'is', null)),
    ]
    if (filter.ids) all.push(eb('id', 'in', filter.ids.length ? filter.ids : ['']))
    if (filter.webhookId) all.push(eb('webhook_id', '=', filter.webhookId))
    if (filter.since) all.push(eb('created_at', '>=', filter.since))
    return eb.and(all)
  }
}
