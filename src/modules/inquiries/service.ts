import type { TenantContext } from '../../context.ts'
import type { InquiryRow, InquiryUpdate } from '../../db/schema.ts'
import { withTx } from '../../engine/tx.ts'
import { emit } from '../../events/emit.ts'
import { NotFoundError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { jsonString } from '../../lib/json.ts'
import { changedColumns, parseJson, toMetadataJson } from '../fields.ts'
import { assertRefs } from '../refs.ts'
import * as repo from './repo.ts'
import type { CreateInquiryInput, Inquiry, InquiryStatus, UpdateInquiryInput } from './schema.ts'

/** Only creation emits an event (inquiry.created); updates and deletes emit none. */

export function toInquiry(row: InquiryRow): Inquiry {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    message: row.message,
    productId: row.product_id,
    travelDate: row.travel_date,
    travelers: row.travelers,
    status: row.status as InquiryStatus,
    metadata: parseJson<Record<string, string>>(row.metadata) ?? {},
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

/**
 * `JSON.stringify(toInquiry(row))` written straight from the row: the metadata passed
 * through as stored (JSON.stringify's own output, which re-parsing and re-serialising gives back
 * byte for byte). Checked against toInquiry() on random rows (test/unit/record-json.test.ts).
 */
export function inquiryJson(row: InquiryRow): string {
  return `{"id":${JSON.stringify(row.id)},"name":${JSON.stringify(row.name)},"email":${JSON.stringify(row.email)},"phone":${jsonString(row.phone)},"message":${JSON.stringify(row.message)},"productId":${jsonString(row.product_id)},"travelDate":${jsonString(row.travel_date)},"travelers":${row.travelers},"status":${JSON.stringify(row.status)},"metadata":${row.metadata ?? '{}'},"createdAt":${JSON.stringify(row.created_at)},"updatedAt":${JSON.stringify(row.updated_at)}}`
}

export function createInquiry(ctx: TenantContext, input: CreateInquiryInput): Promise<Inquiry> {
  return withTx(ctx.engine, async (scope) => {
    await assertRefs(scope.tx, ctx.tenantId, { productId: ['productId', input.productId] })
    const now = ctx.clock.now().toISOString()
    const row: InquiryRow = {
      id: newId('inq'),
      tenant_id: ctx.tenantId,
      name: input.name,
      email: input.email,
      phone: input.phone ?? null,
      message: input.message,
      product_id: input.productId ?? null,
      travel_date: input.travelDate ?? null,
      travelers: input.travelers ?? null,
      status: 'new',
      metadata: toMetadataJson(input.metadata),
      created_at: now,
      updated_at: now,
    }
    await repo.insertInquiry(scope.tx, row)
    const inquiry = toInquiry(row)
    await emit(scope, ctx, 'inquiry.created', inquiry)
    return inquiry
  })
}

export async function getInquiry(ctx: TenantContext, id: string): Promise<Inquiry> {
  const row = await repo.findInquiry(ctx.db, ctx.tenantId, id)
  if (!row) throw new NotFoundError(`No inquiry ${id}`)
  return toInquiry(row)
}

export function listInquiries(ctx: TenantContext, q: { limit: number; cursor?: string }): ReturnType<typeof repo.listInquiries> {
  return repo.listInquiries(ctx.db, ctx.tenantId, { limit: q.limit, after: q.cursor })
}

export function updateInquiry(ctx: TenantContext, id: string, input: UpdateInquiryInput): Promise<Inquiry> {
  return withTx(ctx.engine, async (scope) => {
    const row = await repo.findInquiry(scope.tx, ctx.tenantId, id)
    if (!row) throw new NotFoundError(`No inquiry ${id}`)
    const set: InquiryUpdate = {}
    if (input.name !== undefined) set.name = input.name
    if (input.email !== undefined) set.email = input.email
    if (input.phone !== undefined) set.phone = input.phone
    if (input.message !== undefined) set.message = input.message
    if (input.productId !== undefined) set.product_id = input.productId
    if (input.travelDate !== undefined) set.travel_date = input.travelDate
    if (input.travelers !== undefined) set.travelers = input.travelers
    if (input.status !== undefined) set.status = input.status
    if (input.metadata !== undefined) set.metadata = toMetadataJson(input.metadata)
    const changed = changedColumns(row, set)
    if (changed.length === 0) return toInquiry(row)
    // Only a changed reference is checked, so an inquiry whose product was deleted can still be edited.
    if (changed.includes('product_id')) await assertRefs(scope.tx, ctx.tenantId, { productId: ['productId', set.product_id] })
    set.updated_at = ctx.clock.now().toISOString()
    await repo.updateInquiry(scope.tx, ctx.tenantId, id, set)
    return toInquiry({ ...row, ...set } as InquiryRow)
  })
}

export async function deleteInquiry(ctx: TenantContext, id: string): Promise<{ id: string; deleted: true }> {
  return withTx(ctx.engine, async (scope) => {
    if (!(await repo.deleteInquiry(scope.tx, ctx.tenantId, id))) throw new NotFoundError(`No inquiry ${id}`)
    return { id, deleted: true as const }
  })
}
