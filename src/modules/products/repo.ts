import type { Db } from '../../db/connect.ts'
import { tenantTable } from '../../db/tenant-table.ts'
import type { Tx } from '../../db/tx.ts'
import type { ProductRow, ProductUpdate } from '../../db/schema.ts'

/** Rows of the caller's tenant only: every statement starts from `tenant_id` (see db/tenant-table.ts). */
const table = tenantTable('products', { served: [['active']] })

export const findProduct = (db: Db | Tx, tenantId: string, id: string): Promise<ProductRow | undefined> => table.find(db, tenantId, id)
export const insertProduct = (tx: Tx, row: ProductRow): Promise<void> => table.insert(tx, row)
export const updateProduct = (tx: Tx, tenantId: string, id: string, set: ProductUpdate): Promise<void> => table.update(tx, tenantId, id, set)
export const deleteProduct = (tx: Tx, tenantId: string, id: string): Promise<boolean> => table.remove(tx, tenantId, id)

/** The id of the tenant's product with this code, if any. */
export async function findProductIdByCode(db: Db | Tx, tenantId: string, code: string): Promise<string | undefined> {
  return (await table.findBy(db, tenantId, { code }))?.id
}

export interface ProductFilter {
  active?: boolean
  after?: string
  limit: number
}

/** Newest first, keyset-paged on the id; limit + 1 rows tell whether more follow. */
export function listProducts(db: Db, tenantId: string, f: ProductFilter): Promise<ProductRow[]> {
  return table.list(db, tenantId, { eq: { active: f.active === undefined ? undefined : f.active ? 1 : 0 }, after: f.after, limit: f.limit })
}
