import type { Db } from '../../db/connect.ts'
import type { PaymentRow, PaymentUpdate } from '../../db/schema.ts'
import type { Tx } from '../../db/tx.ts'

/** Every query of this file starts from the tenant. Payments are never deleted. */

export function findPayment(db: Db | Tx, tenantId: string, id: string): Promise<PaymentRow | undefined> {
  return db.selectFrom('payments').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
}

export async function insertPayment(tx: Tx, row: PaymentRow): Promise<void> {
  await tx.insertInto('payments').values(row).execute()
}

export async function updatePayment(tx: Tx, tenantId: string, id: string, set: PaymentUpdate): Promise<void> {
  await tx.updateTable('payments').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export interface PaymentFilter {
  orderId?: string
  invoiceId?: string
  after?: string
  limit: number
}

/** Newest first, keyset-paged on the id; fetches limit + 1 to know whether more follow. */
export function listPayments(db: Db, tenantId: string, f: PaymentFilter): Promise<PaymentRow[]> {
  let q = db.selectFrom('payments').selectAll().where('tenant_id', '=', tenantId)
  if (f.orderId) q = q.where('order_id', '=', f.orderId)
  if (f.invoiceId) q = q.where('invoice_id', '=', f.invoiceId)
  if (f.after) q = q.where('id', '<', f.after)
  return q.orderBy('id', 'desc').limit(f.limit + 1).execute()
}
