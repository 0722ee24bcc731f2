import type { Db } from '../../db/connect.ts'
import type { NewOrder, OrderRow, OrderUpdate } from '../../db/schema.ts'
import type { Tx } from '../../db/tx.ts'

/** Every query of this file starts from the tenant. */

export function findOrder(db: Db | Tx, tenantId: string, id: string): Promise<OrderRow | undefined> {
  return db.selectFrom('orders').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
}

export async function insertOrder(tx: Tx, row: NewOrder): Promise<void> {
  await tx.insertInto('orders').values(row).execute()
}

export async function updateOrder(tx: Tx, tenantId: string, id: string, set: OrderUpdate): Promise<void> {
  await tx.updateTable('orders').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteOrder(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const r = await tx.deleteFrom('orders').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}

export interface OrderFilter {
  status?: string
  customerId?: string
  createdAfter?: string
  createdBefore?: string
  after?: string
  limit: number
}

/** Newest first, keyset-paged on the id; fetches limit + 1 to know whether more follow. */
export function listOrders(db: Db, tenantId: string, f: OrderFilter): Promise<OrderRow[]> {
  let q = db.selectFrom('orders').selectAll().where('tenant_id', '=', tenantId)
  if (f.status) q = q.where('status', '=', f.status)
  if (f.customerId) q = q.where('customer_id', '=', f.customerId)
  if (f.createdAfter) q = q.where('created_at', '>', f.createdAfter)
  if (f.createdBefore) q = q.where('created_at', '<', f.createdBefore)
  if (f.after) q = q.where('id', '<', f.after)
  return q.orderBy('id', 'desc').limit(f.limit + 1).execute()
}
