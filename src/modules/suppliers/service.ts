import type { TenantContext } from '../../context.ts'
import type { SupplierRow, SupplierUpdate } from '../../db/schema.ts'
import { withTx } from '../../engine/tx.ts'
import { NotFoundError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { jsonString } from '../../lib/json.ts'
import { changedColumns, parseJson, toAddressJson, toMetadataJson, type AddressValue } from '../fields.ts'
import * as repo from './repo.ts'
import type { CreateSupplierInput, Supplier, SupplierType, UpdateSupplierInput } from './schema.ts'

/** Suppliers emit no events (CONTRACT §6). */

export function toSupplier(row: SupplierRow): Supplier {
  return {
    id: row.id,
    name: row.name,
    type: row.type as SupplierType,
    email: row.email,
    phone: row.phone,
    address: parseJson<AddressValue>(row.address),
    notes: row.notes,
    metadata: parseJson<Record<string, string>>(row.metadata) ?? {},
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

/**
 * `JSON.stringify(toSupplier(row))` written straight from the row: the address and metadata passed
 * through as stored (JSON.stringify's own output, which re-parsing and re-serialising gives back
 * byte for byte). Checked against toSupplier() on random rows (test/unit/record-json.test.ts).
 */
export function supplierJson(row: SupplierRow): string {
  return `{"id":${JSON.stringify(row.id)},"name":${JSON.stringify(row.name)},"type":${JSON.stringify(row.type)},"email":${jsonString(row.email)},"phone":${jsonString(row.phone)},"address":${row.address ?? 'null'},"notes":${jsonString(row.notes)},"metadata":${row.metadata ?? '{}'},"createdAt":${JSON.stringify(row.created_at)},"updatedAt":${JSON.stringify(row.updated_at)}}`
}

export function createSupplier(ctx: TenantContext, input: CreateSupplierInput): Promise<Supplier> {
  return withTx(ctx.engine, async (scope) => {
    const now = ctx.clock.now().toISOString()
    const row: SupplierRow = {
      id: newId('sup'),
      tenant_id: ctx.tenantId,
      name: input.name,
      type: input.type,
      email: input.email ?? null,
      phone: input.phone ?? null,
      address: toAddressJson(input.address),
      notes: input.notes ?? null,
      metadata: toMetadataJson(input.metadata),
      created_at: now,
      updated_at: now,
    }
    await repo.insertSupplier(scope.tx, row)
    return toSupplier(row)
  })
}

export async function getSupplier(ctx: TenantContext, id: string): Promise<Supplier> {
  const row = await repo.findSupplier(ctx.db, ctx.tenantId, id)
  if (!row) throw new NotFoundError(`No supplier ${id}`)
  return toSupplier(row)
}

export function listSuppliers(ctx: TenantContext, q: { limit: number; cursor?: string }): ReturnType<typeof repo.listSuppliers> {
  return repo.listSuppliers(ctx.db, ctx.tenantId, { limit: q.limit, after: q.cursor })
}

export function updateSupplier(ctx: TenantContext, id: string, input: UpdateSupplierInput): Promise<Supplier> {
  return withTx(ctx.engine, async (scope) => {
    const row = await repo.findSupplier(scope.tx, ctx.tenantId, id)
    if (!row) throw new NotFoundError(`No supplier ${id}`)
    const set: SupplierUpdate = {}
    if (input.name !== undefined) set.name = input.name
    if (input.type !== undefined) set.type = input.type
    if (input.email !== undefined) set.email = input.email
    if (input.phone !== undefined) set.phone = input.phone
    if (input.address !== undefined) set.address = toAddressJson(input.address)
    if (input.notes !== undefined) set.notes = input.notes
    if (input.metadata !== undefined) set.metadata = toMetadataJson(input.metadata)
    const changed = changedColumns(row, set)
    if (changed.length === 0) return toSupplier(row)
    set.updated_at = ctx.clock.now().toISOString()
    await repo.updateSupplier(scope.tx, ctx.tenantId, id, set)
    return toSupplier({ ...row, ...set } as SupplierRow)
  })
}

export async function deleteSupplier(ctx: TenantContext, id: string): Promise<{ id: string; deleted: true }> {
  return withTx(ctx.engine, async (scope) => {
    if (!(await repo.deleteSupplier(scope.tx, ctx.tenantId, id))) throw new NotFoundError(`No supplier ${id}`)
    return { id, deleted: true as const }
  })
}
