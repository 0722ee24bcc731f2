import type { Db } from '../../db/connect.ts'
import { tenantTable } from '../../db/tenant-table.ts'
import type { Tx } from '../../db/tx.ts'
import type { InquiryRow, InquiryUpdate } from '../../db/schema.ts'

/** Rows of the caller's tenant only: every statement starts from `tenant_id` (see db/tenant-table.ts). */
const table = tenantTable('inquiries')

export const findInquiry = (db: Db | Tx, tenantId: string, id: string): Promise<InquiryRow | undefined> => table.find(db, tenantId, id)
export const insertInquiry = (tx: Tx, row: InquiryRow): Promise<void> => table.insert(tx, row)
export const updateInquiry = (tx: Tx, tenantId: string, id: string, set: InquiryUpdate): Promise<void> => table.update(tx, tenantId, id, set)
export const deleteInquiry = (tx: Tx, tenantId: string, id: string): Promise<boolean> => table.remove(tx, tenantId, id)

/** Newest first, keyset-paged on the id; limit + 1 rows tell whether more follow. */
export function listInquiries(db: Db, tenantId: string, f: { after?: string; limit: number }): Promise<InquiryRow[]> {
  return table.list(db, tenantId, { eq: {  }, after: f.after, limit: f.limit })
}
