import type { Db } from '../../db/connect.ts'
import type { SupplierRow, SupplierUpdate } from '../../db/schema.ts'
import type { Tx } from '../../db/tx.ts'

/** Every query of this file starts from the tenant. */

export function findSupplier(db: Db | Tx, tenantId: string, id: string): Promise<SupplierRow | undefined> {
  return db.selectFrom('suppliers').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
}

export async function insertSupplier(tx: Tx, row: SupplierRow): Promise<void> {
  await tx.insertInto('suppliers').values(row).execute()
}

export async function updateSupplier(tx: Tx, tenantId: string, id: string, set: SupplierUpdate): Promise<void> {
  await tx.updateTable('suppliers').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteSupplier(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const r = await tx.deleteFrom('suppliers').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}

/** Newest first, keyset-paged on the id; fetches limit + 1 to know whether more follow. */
export function listSuppliers(db: Db, tenantId: string, f: { after?: string; limit: number }): Promise<SupplierRow[]> {
  let q = db.selectFrom('suppliers').selectAll().where('tenant_id', '=', tenantId)
  if (f.after) q = q.where('id', '<', f.after)
  return q.orderBy('id', 'desc').limit(f.limit + 1).execute()
}
