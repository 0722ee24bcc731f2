import type { TenantContext } from '../../context.ts'
import type { ContentRow, ContentUpdate } from '../../db/schema.ts'
import { type Tx } from '../../db/tx.ts'
import { withTx } from '../../engine/tx.ts'
import { ConflictError, NotFoundError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { changedColumns, parseJson, toMetadataJson } from '../fields.ts'
import * as repo from './repo.ts'
import type { Content, ContentStatus, CreateContentInput, UpdateContentInput } from './schema.ts'

/** Content emits no events (CONTRACT §6). `entity` is the validated path segment. */

export function toContent(row: ContentRow): Content {
  return {
    id: row.id,
    entity: row.entity,
    slug: row.slug,
    title: row.title,
    body: row.body,
    data: parseJson<Record<string, unknown>>(row.data)!,
    status: row.status as ContentStatus,
    metadata: parseJson<Record<string, string>>(row.metadata) ?? {},
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

/**
 * `JSON.stringify(toContent(row))` in pieces, written straight from the row: `data` and
 * `metadata` are passed through as stored (JSON.stringify's own output, so re-parsing and
 * re-serialising gives them back byte for byte), `body` — up to 100,000 characters — is its own
 * piece. A page of large records is thus never parsed into objects and never joined into one
 * string per record (a single character past Latin-1 in the body would make that whole string
 * two bytes a character): http/pagination.ts toPage() turns each piece into bytes. Checked
 * against toContent() on random rows in test/unit/content-json.test.ts.
 */
export function contentJson(row: ContentRow): string[] {
  return [
    `{"id":${JSON.stringify(row.id)},"entity":${JSON.stringify(row.entity)},"slug":${JSON.stringify(row.slug)},"title":${JSON.stringify(row.title)},"body":`,
    row.body === null ? 'null' : JSON.stringify(row.body),
    `,"data":`,
    row.data,
    `,"status":${JSON.stringify(row.status)},"metadata":${row.metadata ?? '{}'},"createdAt":${JSON.stringify(row.created_at)},"updatedAt":${JSON.stringify(row.updated_at)}}`,
  ]
}

export function createContent(ctx: TenantContext, entity: string, input: CreateContentInput): Promise<Content> {
  return withTx(ctx.engine, async (scope) => {
    await _assertSlugFree(scope.tx, ctx.tenantId, entity, input.slug)
    const now = ctx.clock.now().toISOString()
    const row: ContentRow = {
      id: newId('cnt'),
      tenant_id: ctx.tenantId,
      entity,
      slug: input.slug,
      title: input.title,
      body: input.body ?? null,
      data: JSON.stringify(input.data ?? {}),
      status: input.status,
      metadata: toMetadataJson(input.metadata),
      created_at: now,
      updated_at: now,
    }
    await repo.insertContent(scope.tx, row)
    return toContent(row)
  })
}

export async function getContent(ctx: TenantContext, entity: string, id: string): Promise<Content> {
  const row = await repo.findContent(ctx.db, ctx.tenantId, entity, id)
  if (!row) throw new NotFoundError(`No ${entity} record ${id}`)
  return toContent(row)
}

export function listContent(ctx: TenantContext, entity: string, q: Omit<repo.ContentFilter, 'after'> & { cursor?: string }): ReturnType<typeof repo.listContent> {
  return repo.listContent(ctx.db, ctx.tenantId, entity, { ...q, after: q.cursor })
}

export function updateContent(ctx: TenantContext, entity: string, id: string, input: UpdateContentInput): Promise<Content> {
  return withTx(ctx.engine, async (scope) => {
    const row = await repo.findContent(scope.tx, ctx.tenantId, entity, id)
    if (!row) throw new NotFoundError(`No ${entity} record ${id}`)
    const set: ContentUpdate = {}
    if (input.slug !== undefined) set.slug = input.slug
    if (input.title !== undefined) set.title = input.title
    if (input.body !== undefined) set.body = input.body
    if (input.data !== undefined) set.data = JSON.stringify(input.data ?? {})
    if (input.status !== undefined) set.status = input.status
    if (input.metadata !== undefined) set.metadata = toMetadataJson(input.metadata)
    const changed = changedColumns(row, set)
    if (changed.length === 0) return toContent(row)
    if (changed.includes('slug')) await _assertSlugFree(scope.tx, ctx.tenantId, entity, set.slug!)
    set.updated_at = ctx.clock.now().toISOString()
    await repo.updateContent(scope.tx, ctx.tenantId, entity, id, set)
    return toContent({ ...row, ...set } as ContentRow)
  })
}

export async function deleteContent(ctx: TenantContext, entity: string, id: string): Promise<{ id: string; deleted: true }> {
  return withTx(ctx.engine, async (scope) => {
    if (!(await repo.deleteContent(scope.tx, ctx.tenantId, entity, id))) throw new NotFoundError(`No ${entity} record ${id}`)
    return { id, deleted: true as const }
  })
}

/** Slugs are unique per tenant and entity; checked inside the write transaction, which holds the database's write lock. */
async function _assertSlugFree(tx: Tx, tenantId: string, entity: string, slug: string): Promise<void> {
  const holder = await repo.findContentIdBySlug(tx, tenantId, entity, slug)
  if (holder) throw new ConflictError(`Slug '${slug}' is already used by ${entity} record ${holder}`)
}
