import type { TenantContext } from '../../context.ts'
import type { ProductRow, ProductUpdate } from '../../db/schema.ts'
import { type Tx } from '../../db/tx.ts'
import { withTx } from '../../engine/tx.ts'
import { emit } from '../../events/emit.ts'
import { ConflictError, InvalidError, NotFoundError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { jsonString } from '../../lib/json.ts'
import { minorDigits, toMajor, toMinor } from '../../lib/money.ts'
import { changedColumns, parseJson, toMetadataJson } from '../fields.ts'
import * as repo from './repo.ts'
import type { CreateProductInput, Product, UpdateProductInput } from './schema.ts'

export function toProduct(row: ProductRow): Product {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    code: row.code,
    price: toMajor(row.price, row.currency),
    currency: row.currency,
    durationMinutes: row.duration_minutes,
    location: row.location,
    capacity: row.capacity,
    active: row.active === 1,
    metadata: parseJson<Record<string, string>>(row.metadata) ?? {},
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

/**
 * `JSON.stringify(toProduct(row))` written straight from the row: the metadata passed
 * through as stored (JSON.stringify's own output, which re-parsing and re-serialising gives back
 * byte for byte). Checked against toProduct() on random rows (test/unit/record-json.test.ts).
 */
export function productJson(row: ProductRow): string {
  return `{"id":${JSON.stringify(row.id)},"name":${JSON.stringify(row.name)},"description":${jsonString(row.description)},"code":${jsonString(row.code)},"price":${toMajor(row.price, row.currency)},"currency":${JSON.stringify(row.currency)},"durationMinutes":${row.duration_minutes},"location":${jsonString(row.location)},"capacity":${row.capacity},"active":${row.active === 1},"metadata":${row.metadata ?? '{}'},"createdAt":${JSON.stringify(row.created_at)},"updatedAt":${JSON.stringify(row.updated_at)}}`
}

export function createProduct(ctx: TenantContext, input: CreateProductInput): Promise<Product> {
  const price = _priceMinor(input.price, input.currency)
  return withTx(ctx.engine, async (scope) => {
    if (input.code) await _assertCodeFree(scope.tx, ctx.tenantId, input.code)
    const now = ctx.clock.now().toISOString()
    const row: ProductRow = {
      id: newId('prd'),
      tenant_id: ctx.tenantId,
      name: input.name,
      description: input.description ?? null,
      code: input.code ?? null,
      price,
      currency: input.currency,
      duration_minutes: input.durationMinutes ?? null,
      location: input.location ?? null,
      capacity: input.capacity ?? null,
      active: input.active ? 1 : 0,
      metadata: toMetadataJson(input.metadata),
      created_at: now,
      updated_at: now,
    }
    await repo.insertProduct(scope.tx, row)
    const product = toProduct(row)
    await emit(scope, ctx, 'product.created', product)
    return product
  })
}

export async function getProduct(ctx: TenantContext, id: string): Promise<Product> {
  const row = await repo.findProduct(ctx.db, ctx.tenantId, id)
  if (!row) throw new NotFoundError(`No product ${id}`)
  return toProduct(row)
}

export function listProducts(ctx: TenantContext, q: Omit<repo.ProductFilter, 'after'> & { cursor?: string }): ReturnType<typeof repo.listProducts> {
  return repo.listProducts(ctx.db, ctx.tenantId, { ...q, after: q.cursor })
}

export function updateProduct(ctx: TenantContext, id: string, input: UpdateProductInput): Promise<Product> {
  return withTx(ctx.engine, async (scope) => {
    const row = await repo.findProduct(scope.tx, ctx.tenantId, id)
    if (!row) throw new NotFoundError(`No product ${id}`)
    const set: ProductUpdate = {}
    if (input.price !== undefined || input.currency !== undefined) {
      // A new currency re-checks the (new or kept) price against its minor digits.
      const currency = input.currency ?? row.currency
      set.price = _priceMinor(input.price ?? toMajor(row.price, row.currency), currency)
      set.currency = currency
    }
    if (input.name !== undefined) set.name = input.name
    if (input.description !== undefined) set.description = input.description
    if (input.code !== undefined) set.code = input.code
    if (input.durationMinutes !== undefined) set.duration_minutes = input.durationMinutes
    if (input.location !== undefined) set.location = input.location
    if (input.capacity !== undefined) set.capacity = input.capacity
    if (input.active !== undefined) set.active = input.active ? 1 : 0
    if (input.metadata !== undefined) set.metadata = toMetadataJson(input.metadata)
    const changed = changedColumns(row, set)
    if (changed.length === 0) return toProduct(row)
    if (set.code && set.code !== row.code) await _assertCodeFree(scope.tx, ctx.tenantId, set.code)
    set.updated_at = ctx.clock.now().toISOString()
    await repo.updateProduct(scope.tx, ctx.tenantId, id, set)
    const product = toProduct({ ...row, ...set } as ProductRow)
    await emit(scope, ctx, 'product.updated', product)
    return product
  })
}

export async function deleteProduct(ctx: TenantContext, id: string): Promise<{ id: string; deleted: true }> {
  return withTx(ctx.engine, async (scope) => {
    if (!(await repo.deleteProduct(scope.tx, ctx.tenantId, id))) throw new NotFoundError(`No product ${id}`)
    return { id, deleted: true as const }
  })
}

/** Major units → minor units of the currency; 422 on `price` when it has too many decimals. */
function _priceMinor(price: number, currency: string): number {
  const minor = toMinor(price, currency)
  if (minor === null) throw new InvalidError([{ path: 'price', message: `must have at most ${minorDigits(currency)} decimal places for ${currency}` }])
  return minor
}

/** Codes are unique per tenant; checked inside the write transaction, which holds the database's write lock. */
async function _assertCodeFree(tx: Tx, tenantId: string, code: string): Promise<void> {
  const holder = await repo.findProductIdByCode(tx, tenantId, code)
  if (holder) throw new ConflictError(`Product code '${code}' is already used by ${holder}`)
}
