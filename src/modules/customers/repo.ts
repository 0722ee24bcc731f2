import type { Db } from '../../db/connect.ts'
import { tenantTable } from '../../db/tenant-table.ts'
import type { Tx } from '../../db/tx.ts'
import type { CustomerRow, CustomerUpdate } from '../../db/schema.ts'

/** Rows of the caller's tenant only: every statement starts from `tenant_id` (see db/tenant-table.ts). */
const table = tenantTable('customers', { served: [['email']] })

export const findCustomer = (db: Db | Tx, tenantId: string, id: string): Promise<CustomerRow | undefined> => table.find(db, tenantId, id)
export const insertCustomer = (tx: Tx, row: CustomerRow): Promise<void> => table.insert(tx, row)
export const updateCustomer = (tx: Tx, tenantId: string, id: string, set: CustomerUpdate): Promise<void> => table.update(tx, tenantId, id, set)
export const deleteCustomer = (tx: Tx, tenantId: string, id: string): Promise<boolean> => table.remove(tx, tenantId, id)

export interface CustomerFilter {
  email?: string
  after?: string
  limit: number
}

/** Newest first, keyset-paged on the id; limit + 1 rows tell whether more follow. */
export function listCustomers(db: Db, tenantId: string, f: CustomerFilter): Promise<CustomerRow[]> {
  return table.list(db, tenantId, { eq: { email: f.email }, after: f.after, limit: f.limit })
}
