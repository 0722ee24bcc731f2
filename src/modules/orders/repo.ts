import type { Db } from '../../db/connect.ts'
import type { NewOrder, OrderRow, OrderUpdate } from '../../db/schema.ts'
import { tenantTable } from '../../db/tenant-table.ts'
import type { Tx } from '../../db/tx.ts'

/** Rows of the caller's tenant only: every statement starts from `tenant_id` (see db/tenant-table.ts). */
const table = tenantTable('orders')

export const findOrder = (db: Db | Tx, tenantId: string, id: string): Promise<OrderRow | undefined> => table.find(db, tenantId, id)
export const insertOrder = (tx: Tx, row: NewOrder): Promise<void> => table.insert(tx, row)
export const updateOrder = (tx: Tx, tenantId: string, id: string, set: OrderUpdate): Promise<void> => table.update(tx, tenantId, id, set)
export const deleteOrder = (tx: Tx, tenantId: string, id: string): Promise<boolean> => table.remove(tx, tenantId, id)

export interface OrderFilter {
  status?: string
  customerId?: string
  createdAfter?: string
  createdBefore?: string
  after?: string
  limit: number
}

/** Newest first, keyset-paged on the id; limit + 1 rows tell whether more follow. */
export function listOrders(db: Db, tenantId: string, f: OrderFilter): Promise<OrderRow[]> {
  return table.list(db, tenantId, {
    eq: { status: f.status, customer_id: f.customerId },
    gt: { created_at: f.createdAfter },
    lt: { created_at: f.createdBefore },
    after: f.after,
    limit: f.limit,
  })
}
