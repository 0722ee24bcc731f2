import type { Db } from '../db/connect.ts'

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
  let q = db.updateTable('deliveries')
    .set((eb) => ({ due_at: now.toISOString(), manual: eb('manual', '+', 1) }))
    .where('status', 'in', filter.status ? [filter.status] : ['failed', 'delivered'])
    .where('webhook_id', 'in', (eb) => eb.selectFrom('webhooks').select('id').where('active', '=', 1).where('deleted_at', 'is', null))
  if (filter.ids) q = q.where('id', 'in', filter.ids.length ? filter.ids : [''])
  if (filter.webhookId) q = q.where('webhook_id', '=', filter.webhookId)
  if (filter.since) q = q.where('created_at', '>=', filter.since)
  const rows = await q.returning('id').execute()
  return rows.map((r) => r.id)
}
