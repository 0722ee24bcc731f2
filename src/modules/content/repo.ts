import type { Db } from '../../db/connect.ts'
import type { ContentRow, ContentUpdate } from '../../db/schema.ts'
import type { Tx } from '../../db/tx.ts'

/** Every query of this file starts from the tenant and the entity: a record is invisible under another entity name. */

export function findContent(db: Db | Tx, tenantId: string, entity: string, id: string): Promise<ContentRow | undefined> {
  return db.selectFrom('content').selectAll()
    .where('tenant_id', '=', tenantId).where('entity', '=', entity).where('id', '=', id).executeTakeFirst()
}

/** The id of the record of this entity holding the slug, if any. */
export async function findContentIdBySlug(db: Db | Tx, tenantId: string, entity: string, slug: string): Promise<string | undefined> {
  const r = await db.selectFrom('content').select('id')
    .where('tenant_id', '=', tenantId).where('entity', '=', entity).where('slug', '=', slug).executeTakeFirst()
  return r?.id
}

export async function insertContent(tx: Tx, row: ContentRow): Promise<void> {
  await tx.insertInto('content').values(row).execute()
}

export async function updateContent(tx: Tx, tenantId: string, entity: string, id: string, set: ContentUpdate): Promise<void> {
  await tx.updateTable('content').set(set)
    .where('tenant_id', '=', tenantId).where('entity', '=', entity).where('id', '=', id).execute()
}

export async function deleteContent(tx: Tx, tenantId: string, entity: string, id: string): Promise<boolean> {
  const r = await tx.deleteFrom('content')
    .where('tenant_id', '=', tenantId).where('entity', '=', entity).where('id', '=', id).executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}

export interface ContentFilter {
  status?: string
  slug?: string
  after?: string
  limit: number
}

/** Newest first, keyset-paged on the id; fetches limit + 1 to know whether more follow. */
export function listContent(db: Db, tenantId: string, entity: string, f: ContentFilter): Promise<ContentRow[]> {
  let q = db.selectFrom('content').selectAll().where('tenant_id', '=', tenantId).where('entity', '=', entity)
  if (f.status) q = q.where('status', '=', f.status)
  if (f.slug) q = q.where('slug', '=', f.slug)
  if (f.after) q = q.where('id', '<', f.after)
  return q.orderBy('id', 'desc').limit(f.limit + 1).execute()
}
