import type { Db } from '../../db/connect.ts'
import { tenantTable } from '../../db/tenant-table.ts'
import type { Tx } from '../../db/tx.ts'
import type { SupplierRow, SupplierUpdate } from '../../db/schema.ts'

/** Rows of the caller's tenant only: every statement starts from `tenant_id` (see db/tenant-table.ts). */
const table = tenantTable('suppliers')

export const findSupplier = (db: Db | Tx, tenantId: string, id: string): Promise<SupplierRow | undefined> => table.find(db, tenantId, id)
export const insertSupplier = (tx: Tx, row: SupplierRow): Promise<void> => table.insert(tx, row)
export const updateSupplier = (tx: Tx, tenantId: string, id: string, set: SupplierUpdate): Promise<void> => table.update(tx, tenantId, id, set)
export const deleteSupplier = (tx: Tx, tenantId: string, id: string): Promise<boolean> => table.remove(tx, tenantId, id)

/** Newest first, keyset-paged on the id; limit + 1 rows tell whether more follow. */
export function listSuppliers(db: Db, tenantId: string, f: { after?: string; limit: number }): Promise<SupplierRow[]> {
  return table.list(db, tenantId, { eq: {  }, after: f.after, limit: f.limit })
}
