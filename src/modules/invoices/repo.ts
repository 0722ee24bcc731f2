import type { Db } from '../../db/connect.ts'
import { tenantTable } from '../../db/tenant-table.ts'
import type { Tx } from '../../db/tx.ts'
import type { InvoiceRow, InvoiceUpdate } from '../../db/schema.ts'

/** Rows of the caller's tenant only: every statement starts from `tenant_id` (see db/tenant-table.ts). */
const table = tenantTable('invoices', { served: [['order_id'], ['status']] })

export const findInvoice = (db: Db | Tx, tenantId: string, id: string): Promise<InvoiceRow | undefined> => table.find(db, tenantId, id)
export const insertInvoice = (tx: Tx, row: InvoiceRow): Promise<void> => table.insert(tx, row)
export const updateInvoice = (tx: Tx, tenantId: string, id: string, set: InvoiceUpdate): Promise<void> => table.update(tx, tenantId, id, set)
export const deleteInvoice = (tx: Tx, tenantId: string, id: string): Promise<boolean> => table.remove(tx, tenantId, id)

export interface InvoiceFilter {
  status?: string
  orderId?: string
  after?: string
  limit: number
}

/** Newest first, keyset-paged on the id; limit + 1 rows tell whether more follow. */
export function listInvoices(db: Db, tenantId: string, f: InvoiceFilter): Promise<InvoiceRow[]> {
  return table.list(db, tenantId, { eq: { status: f.status, order_id: f.orderId }, after: f.after, limit: f.limit })
}
