import type { Db } from '../../db/connect.ts'
import type { DeliveryRow, WebhookRow } from '../../db/schema.ts'
import { readPageRows } from '../../db/page-rows.ts'
import { tenantTable } from '../../db/tenant-table.ts'
import type { Tx } from '../../db/tx.ts'

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

/** Queued work of a subscription is dropped: never-attempted deliveries end failed, retries are unscheduled. */
export async function dropQueued(tx: Tx, tenantId: string, webhookId: string): Promise<void> {
  await tx.updateTable('deliveries')
    .set((eb) => ({
      due_at: null, next_retry_at: null, manual: 0,
      status: eb.case().when('status', '=', 'pending').then('failed').else(eb.ref('status')).end(),
    }))
    .where('tenant_id', '=', tenantId).where('webhook_id', '=', webhookId).where('due_at', 'is not', null)
    .execute()
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

export function listDeliveries(db: Db, tenantId: string, f: DeliveryFilter): Promise<DeliveryWithPayload[]> {
  return readPageRows(f.limit, f.after, (after, n) => {
    let q = db.selectFrom('deliveries').innerJoin('events', 'events.id', 'deliveries.event_id')
      .selectAll('deliveries').select('events.payload')
      .where('deliveries.tenant_id', '=', tenantId)
    if (f.webhookId) q = q.where('deliveries.webhook_id', '=', f.webhookId)
    if (f.status) q = q.where('deliveries.status', '=', f.status)
    if (f.event) q = q.where('deliveries.event', '=', f.event)
    if (f.createdAfter) q = q.where('deliveries.created_at', '>', f.createdAfter)
    if (after) q = q.where('deliveries.id', '<', after)
    return q.orderBy('deliveries.id', 'desc').limit(n).execute()
  })
}

export function attemptsOf(db: Db | Tx, tenantId: string, deliveryId: string) {
  return db.selectFrom('delivery_attempts').selectAll()
    .where('tenant_id', '=', tenantId).where('delivery_id', '=', deliveryId).orderBy('attempt').execute()
}
