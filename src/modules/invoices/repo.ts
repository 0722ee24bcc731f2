import type { Db } from '../../db/connect.ts'
import type { InvoiceRow, InvoiceUpdate } from '../../db/schema.ts'
import type { Tx } from '../../db/tx.ts'

/** Every query of this file starts from the tenant. */

export function findInvoice(db: Db | Tx, tenantId: string, id: string): Promise<InvoiceRow | undefined> {
  return db.selectFrom('invoices').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
}

export async function insertInvoice(tx: Tx, row: InvoiceRow): Promise<void> {
  await tx.insertInto('invoices').values(row).execute()
}

export async function updateInvoice(tx: Tx, tenantId: string, id: string, set: InvoiceUpdate): Promise<void> {
  await tx.updateTable('invoices').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteInvoice(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const r = await tx.deleteFrom('invoices').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}

export interface InvoiceFilter {
  status?: string
  orderId?: string
  after?: string
  limit: number
}

/** Newest first, keyset-paged on the id; fetches limit + 1 to know whether more follow. */
export function listInvoices(db: Db, tenantId: string, f: InvoiceFilter): Promise<InvoiceRow[]> {
  let q = db.selectFrom('invoices').selectAll().where('tenant_id', '=', tenantId)
  if (f.status) q = q.where('status', '=', f.status)
  if (f.orderId) q = q.where('order_id', '=', f.orderId)
  if (f.after) q = q.where('id', '<', f.after)
  return q.orderBy('id', 'desc').limit(f.limit + 1).execute()
}
