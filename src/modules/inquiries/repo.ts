import type { Db } from '../../db/connect.ts'
import type { InquiryRow, InquiryUpdate } from '../../db/schema.ts'
import type { Tx } from '../../db/tx.ts'

/** Every query of this file starts from the tenant. */

export function findInquiry(db: Db | Tx, tenantId: string, id: string): Promise<InquiryRow | undefined> {
  return db.selectFrom('inquiries').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
}

export async function insertInquiry(tx: Tx, row: InquiryRow): Promise<void> {
  await tx.insertInto('inquiries').values(row).execute()
}

export async function updateInquiry(tx: Tx, tenantId: string, id: string, set: InquiryUpdate): Promise<void> {
  await tx.updateTable('inquiries').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteInquiry(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const r = await tx.deleteFrom('inquiries').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}

/** Newest first, keyset-paged on the id; fetches limit + 1 to know whether more follow. */
export function listInquiries(db: Db, tenantId: string, f: { after?: string; limit: number }): Promise<InquiryRow[]> {
  let q = db.selectFrom('inquiries').selectAll().where('tenant_id', '=', tenantId)
  if (f.after) q = q.where('id', '<', f.after)
  return q.orderBy('id', 'desc').limit(f.limit + 1).execute()
}
