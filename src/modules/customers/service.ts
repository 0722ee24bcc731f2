import type { TenantContext } from '../../context.ts'
import type { Db } from '../../db/connect.ts'
import type { CustomerRow, CustomerUpdate } from '../../db/schema.ts'
import { type Tx } from '../../db/tx.ts'
import { withTx } from '../../engine/tx.ts'
import { emit } from '../../events/emit.ts'
import { NotFoundError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { jsonString } from '../../lib/json.ts'
import { changedColumns, parseJson, toAddressJson, toMetadataJson, type AddressValue } from '../fields.ts'
import * as repo from './repo.ts'
import type { CreateCustomerInput, Customer, CustomerContact, UpdateCustomerInput } from './schema.ts'

export function toCustomer(row: CustomerRow): Customer {
  return {
    id: row.id,
    firstName: row.first_name,
    lastName: row.last_name,
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
 * `JSON.stringify(toCustomer(row))` written straight from the row: the address and metadata are
 * passed through as stored (JSON.stringify's own output, which re-parsing and re-serialising gives
 * back byte for byte). Checked against toCustomer() on random rows (test/unit/record-json.test.ts).
 */
export function customerJson(row: CustomerRow): string {
  return `{"id":${JSON.stringify(row.id)},"firstName":${JSON.stringify(row.first_name)},"lastName":${JSON.stringify(row.last_name)},"email":${JSON.stringify(row.email)},"phone":${jsonString(row.phone)},"address":${row.address ?? 'null'},"notes":${jsonString(row.notes)},"metadata":${row.metadata ?? '{}'},"createdAt":${JSON.stringify(row.created_at)},"updatedAt":${JSON.stringify(row.updated_at)}}`
}

export function createCustomer(ctx: TenantContext, input: CreateCustomerInput): Promise<Customer> {
  return withTx(ctx.engine, async (scope) => {
    const now = ctx.clock.now().toISOString()
    const row: CustomerRow = {
      id: newId('cus'),
      tenant_id: ctx.tenantId,
      first_name: input.firstName,
      last_name: input.lastName,
      email: input.email,
      phone: input.phone ?? null,
      address: toAddressJson(input.address),
      notes: input.notes ?? null,
      metadata: toMetadataJson(input.metadata),
      created_at: now,
      updated_at: now,
    }
    await repo.insertCustomer(scope.tx, row)
    const customer = toCustomer(row)
    await emit(scope, ctx, 'customer.created', customer)
    return customer
  })
}

export async function getCustomer(ctx: TenantContext, id: string): Promise<Customer> {
  const row = await repo.findCustomer(ctx.db, ctx.tenantId, id)
  if (!row) throw new NotFoundError(`No customer ${id}`)
  return toCustomer(row)
}

export function listCustomers(ctx: TenantContext, q: Omit<repo.CustomerFilter, 'after'> & { cursor?: string }): ReturnType<typeof repo.listCustomers> {
  return repo.listCustomers(ctx.db, ctx.tenantId, { ...q, after: q.cursor })
}

export function updateCustomer(ctx: TenantContext, id: string, input: UpdateCustomerInput): Promise<Customer> {
  return withTx(ctx.engine, async (scope) => {
    const row = await repo.findCustomer(scope.tx, ctx.tenantId, id)
    if (!row) throw new NotFoundError(`No customer ${id}`)
    const set: CustomerUpdate = {}
    if (input.firstName !== undefined) set.first_name = input.firstName
    if (input.lastName !== undefined) set.last_name = input.lastName
    if (input.email !== undefined) set.email = input.email
    if (input.phone !== undefined) set.phone = input.phone
    if (input.address !== undefined) set.address = toAddressJson(input.address)
    if (input.notes !== undefined) set.notes = input.notes
    if (input.metadata !== undefined) set.metadata = toMetadataJson(input.metadata)
    const changed = changedColumns(row, set)
    if (changed.length === 0) return toCustomer(row)
    set.updated_at = ctx.clock.now().toISOString()
    await repo.updateCustomer(scope.tx, ctx.tenantId, id, set)
    const customer = toCustomer({ ...row, ...set } as CustomerRow)
    await emit(scope, ctx, 'customer.updated', customer)
    return customer
  })
}

export async function deleteCustomer(ctx: TenantContext, id: string): Promise<{ id: string; deleted: true }> {
  return withTx(ctx.engine, async (scope) => {
    if (!(await repo.deleteCustomer(scope.tx, ctx.tenantId, id))) throw new NotFoundError(`No customer ${id}`)
    return { id, deleted: true as const }
  })
}

/** The name, email and phone an order copies from a customer of the tenant, or undefined when there is none. */
export async function findCustomerContact(db: Db | Tx, tenantId: string, id: string): Promise<CustomerContact | undefined> {
  const row = await repo.findCustomer(db, tenantId, id)
  if (!row) return undefined
  return { firstName: row.first_name, lastName: row.last_name, email: row.email, ...(row.phone ? { phone: row.phone } : {}) }
}
