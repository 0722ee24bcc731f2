import type { Db } from '../../db/connect.ts'
import type { CustomerRow, CustomerUpdate } from '../../db/schema.ts'
import type { Tx } from '../../db/tx.ts'

/** Every query of this file starts from the tenant. */

export function findCustomer(db: Db | Tx, tenantId: string, id: string): Promise<CustomerRow | undefined> {
  return db.selectFrom('customers').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
}

export async function insertCustomer(tx: Tx, row: CustomerRow): Promise<void> {
  await tx.insertInto('customers').values(row).execute()
}

export async function updateCustomer(tx: Tx, tenantId: string, id: string, set: CustomerUpdate): Promise<void> {
  await tx.updateTable('customers').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteCustomer(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const r = await tx.deleteFrom('customers').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}

export interface CustomerFilter {
  email?: string
  after?: string
  limit: number
}

/** Newest first, keyset-paged on the id; fetches limit + 1 to know whether more follow. */
export function listCustomers(db: Db, tenantId: string, f: CustomerFilter): Promise<CustomerRow[]> {
  let q = db.selectFrom('customers').selectAll().where('tenant_id', '=', tenantId)
  if (f.email !== undefined) q = q.where('email', '=', f.email)
  if (f.after) q = q.where('id', '<', f.after)
  return q.orderBy('id', 'desc').limit(f.limit + 1).execute()
}
