import type { Db } from '../../db/connect.ts'
import { tenantTable } from '../../db/tenant-table.ts'
import type { Tx } from '../../db/tx.ts'
import type { PaymentRow, PaymentUpdate } from '../../db/schema.ts'

/** Rows of the caller's tenant only: every statement starts from `tenant_id` (see db/tenant-table.ts). */
const table = tenantTable('payments', { served: [['order_id'], ['invoice_id']] })

export const findPayment = (db: Db | Tx, tenantId: string, id: string): Promise<PaymentRow | undefined> => table.find(db, tenantId, id)
export const insertPayment = (tx: Tx, row: PaymentRow): Promise<void> => table.insert(tx, row)
export const updatePayment = (tx: Tx, tenantId: string, id: string, set: PaymentUpdate): Promise<void> => table.update(tx, tenantId, id, set)

export interface PaymentFilter {
  orderId?: string
  invoiceId?: string
  after?: string
  limit: number
}

/** Newest first, keyset-paged on the id; limit + 1 rows tell whether more follow. */
export function listPayments(db: Db, tenantId: string, f: PaymentFilter): Promise<PaymentRow[]> {
  return table.list(db, tenantId, { eq: { order_id: f.orderId, invoice_id: f.invoiceId }, after: f.after, limit: f.limit })
}
