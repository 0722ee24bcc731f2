import type { Db } from '../../db/connect.ts'
import type { ProductRow, ProductUpdate } from '../../db/schema.ts'
import type { Tx } from '../../db/tx.ts'

/** Every query of this file starts from the tenant. */

export function findProduct(db: Db | Tx, tenantId: string, id: string): Promise<ProductRow | undefined> {
  return db.selectFrom('products').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
}

/** The id of the tenant's product with this code, if any. */
export async function findProductIdByCode(db: Db | Tx, tenantId: string, code: string): Promise<string | undefined> {
  const r = await db.selectFrom('products').select('id').where('tenant_id', '=', tenantId).where('code', '=', code).executeTakeFirst()
  return r?.id
}

export async function insertProduct(tx: Tx, row: ProductRow): Promise<void> {
  await tx.insertInto('products').values(row).execute()
}

export async function updateProduct(tx: Tx, tenantId: string, id: string, set: ProductUpdate): Promise<void> {
  await tx.updateTable('products').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteProduct(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const r = await tx.deleteFrom('products').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}

export interface ProductFilter {
  active?: boolean
  after?: string
  limit: number
}

/** Newest first, keyset-paged on the id; fetches limit + 1 to know whether more follow. */
export function listProducts(db: Db, tenantId: string, f: ProductFilter): Promise<ProductRow[]> {
  let q = db.selectFrom('products').selectAll().where('tenant_id', '=', tenantId)
  if (f.active !== undefined) q = q.where('active', '=', f.active ? 1 : 0)
  if (f.after) q = q.where('id', '<', f.after)
  return q.orderBy('id', 'desc').limit(f.limit + 1).execute()
}
