import type { Db } from '../../db/connect.ts'
import type { ContentRow, ContentUpdate } from '../../db/schema.ts'
import { tenantTable } from '../../db/tenant-table.ts'
import type { Tx } from '../../db/tx.ts'

/**
 * Rows of the caller's tenant and the entity in the path: a record is invisible under another
 * entity name. Every statement starts from `tenant_id` (see db/tenant-table.ts).
 */
const table = tenantTable('content', { scope: ['entity'], served: [['entity', 'slug'], ['entity', 'status'], ['entity', 'status', 'slug']] })

export const findContent = (db: Db | Tx, tenantId: string, entity: string, id: string): Promise<ContentRow | undefined> =>
  table.find(db, tenantId, id, { entity })
export const insertContent = (tx: Tx, row: ContentRow): Promise<void> => table.insert(tx, row)
export const updateContent = (tx: Tx, tenantId: string, entity: string, id: string, set: ContentUpdate): Promise<void> =>
  table.update(tx, tenantId, id, set, { entity })
export const deleteContent = (tx: Tx, tenantId: string, entity: string, id: string): Promise<boolean> =>
  table.remove(tx, tenantId, id, { entity })

/** The id of the record of this entity holding the slug, if any. */
export async function findContentIdBySlug(db: Db | Tx, tenantId: string, entity: string, slug: string): Promise<string | undefined> {
  return (await table.findBy(db, tenantId, { entity, slug }))?.id
}

export interface ContentFilter {
  status?: string
  slug?: string
  after?: string
  limit: number
}

/** Newest first, keyset-paged on the id; limit + 1 rows tell whether more follow. */
export function listContent(db: Db, tenantId: string, entity: string, f: ContentFilter): Promise<ContentRow[]> {
  return table.list(db, tenantId, { eq: { entity, status: f.status, slug: f.slug }, after: f.after, limit: f.limit })
}
