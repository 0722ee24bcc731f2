import type { TenantContext } from '../../context.ts'
import type { OrderRow, OrderUpdate } from '../../db/schema.ts'
import { type TxScope } from '../../db/tx.ts'
import { withTx } from '../../engine/tx.ts'
import { emit } from '../../events/emit.ts'
import { ConflictError, InvalidError, NotFoundError, type ErrorDetail } from '../../lib/errors.ts'
import { Rendered } from '../../lib/rendered.ts'
import { newId } from '../../lib/ids.ts'
import { jsonString } from '../../lib/json.ts'
import { MAX_MINOR, minorDigits, toMajor, toMinor } from '../../lib/money.ts'
import { findCustomerContact } from '../customers/index.ts'
import { changedColumns, parseJson, toMetadataJson } from '../fields.ts'
import { assertRefs, type RefField } from '../refs.ts'
import * as repo from './repo.ts'
import type { CreateOrderInput, Order, OrderCustomerValue, OrderStatus, UpdateOrderInput } from './schema.ts'

interface StoredItem {
  productId: string | null
  description: string
  quantity: number
  unitPrice: number // minor units
}

/** Allowed status moves; anything else is 409. */
const TRANSITIONS: Record<OrderStatus, readonly OrderStatus[]> = {
  pending: ['confirmed', 'cancelled'],
  confirmed: ['cancelled', 'completed'],
  cancelled: [],
  completed: [],
}

export function toOrder(row: OrderRow): Order {
  const items = JSON.parse(row.items) as StoredItem[]
  return {
    id: row.id,
    orderNumber: row.order_number,
    status: row.status as OrderStatus,
    customerId: row.customer_id,
    customer: _customerView(row.customer),
    items: items.map((i) => ({
      productId: i.productId,
      description: i.description,
      quantity: i.quantity,
      unitPrice: toMajor(i.unitPrice, row.currency),
      total: toMajor(i.unitPrice * i.quantity, row.currency),
    })),
    total: toMajor(row.total, row.currency),
    currency: row.currency,
    travelDate: row.travel_date,
    notes: row.notes,
    metadata: parseJson<Record<string, string>>(row.metadata) ?? {},
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

/**
 * `JSON.stringify(toOrder(row))`, written straight from the row: the stored customer and
 * metadata are passed through as text and the items edited as text (_itemsJson()), so nothing
 * is parsed. Exact because those columns hold only what JSON.stringify wrote (`customerJson()`,
 * toMetadataJson(), `_priceItems()`: re-parsing and re-serialising such text gives it back byte
 * for byte); a customer stored without a phone gets `"phone":null` last, as `_customerView()`
 * puts it. The id, order number, status, currency and times are quoted as they are: the service
 * writes them (newId(), the counter, the status names, a checked ISO 4217 code, toISOString())
 * in characters that JSON never escapes. test/unit/order-json.test.ts checks it against
 * toOrder() on random rows.
 */
export function orderJson(row: OrderRow): string {
  const scale = 10 ** minorDigits(row.currency)
  const c = row.customer
  const customer = c.includes('"phone":') ? c : `${c.slice(0, -1)}${c.length > 2 ? ',' : ''}"phone":null}`
  return `{"id":"${row.id}","orderNumber":"${row.order_number}","status":"${row.status}","customerId":${jsonString(row.customer_id)},"customer":${customer},"items":${_itemsJson(row.items, scale)},"total":${row.total / scale},"currency":"${row.currency}","travelDate":${jsonString(row.travel_date)},"notes":${jsonString(row.notes)},"metadata":${row.metadata ?? '{}'},"createdAt":"${row.created_at}","updatedAt":"${row.updated_at}"}`
}

const _PRODUCT_ID = '{"productId":'
const _DESCRIPTION = ',"description":"'
const _QUANTITY = ',"quantity":'
const _UNIT_PRICE = ',"unitPrice":'

/**
 * The stored items (`_priceItems()`'s objects through JSON.stringify: productId, description,
 * quantity, unitPrice in minor units) in the API's form, edited as text: each item is copied up
 * to its unitPrice, which is written in major units with the line's total after it. Nothing is
 * parsed: a key found by its quotes (`,"quantity":`) is that key, since a quote inside a JSON
 * string is always escaped (`\"`). Text in any other shape (keys in another order or with
 * others, spaces, a number that is not a plain integer) goes through JSON.parse, as toOrder()
 * reads it.
 */
function _itemsJson(text: string, scale: number): string {
  let out = ''
  let at = 0
  if (text.charCodeAt(0) !== 91 /* [ */) return _parsedItemsJson(text, scale)
  do {
    if (!text.startsWith(_PRODUCT_ID, at + 1)) return _parsedItemsJson(text, scale)
    const id = at + 1 + _PRODUCT_ID.length
    const d = text.startsWith('null', id) ? id + 4 : text.charCodeAt(id) === 34 /* " */ ? text.indexOf('"', id + 1) + 1 : -1
    const q = d > 0 && text.startsWith(_DESCRIPTION, d) ? text.indexOf(_QUANTITY, d + _DESCRIPTION.length) : -1
    const p = q > 0 && text.charCodeAt(q - 1) === 34 ? text.indexOf(_UNIT_PRICE, q) : -1
    const end = p < 0 ? -1 : text.indexOf('}', p)
    const quantity = end < 0 ? -1 : _integer(text, q + _QUANTITY.length, p)
    const minor = end < 0 ? -1 : _integer(text, p + _UNIT_PRICE.length, end)
    if (quantity < 0 || minor < 0) return _parsedItemsJson(text, scale)
    out += `${text.slice(at, p)},"unitPrice":${minor / scale},"total":${(minor * quantity) / scale}}`
    at = end + 1
  } while (text.charCodeAt(at) === 44 /* , */)
  return at === text.length - 1 && text.charCodeAt(at) === 93 /* ] */ ? `${out}]` : _parsedItemsJson(text, scale)
}

/** The integer JSON.stringify wrote from `from` to `to` (1–15 digits, no leading zero), or -1. */
function _integer(text: string, from: number, to: number): number {
  if (to <= from || to - from > 15 || (to - from > 1 && text.charCodeAt(from) === 48)) return -1
  let n = 0
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - 48
    if (digit < 0 || digit > 9) return -1
    n = n * 10 + digit
  }
  return n
}

function _parsedItemsJson(text: string, scale: number): string {
  const items = JSON.parse(text) as StoredItem[]
  let list = ''
  for (let i = 0; i < items.length; i++) {
    const x = items[i]!
    list += `${i > 0 ? ',' : ''}{"productId":${jsonString(x.productId)},"description":${JSON.stringify(x.description)},"quantity":${x.quantity},"unitPrice":${x.unitPrice / scale},"total":${(x.unitPrice * x.quantity) / scale}}`
  }
  return `[${list}]`
}

/** The order's customer with every field present (`phone: null` when unset), like every other optional field. */
function _customerView(json: string): Order['customer'] {
  const c = JSON.parse(json) as Order['customer']
  return { ...c, phone: c.phone ?? null }
}

/** Converts item prices to minor units for the currency and sums them exactly; 422 on excess decimals. */
function _priceItems(items: { description: string; quantity: number; unitPrice: number; productId?: string | null }[], currency: string): { items: StoredItem[]; total: number } {
  const details: ErrorDetail[] = []
  const stored = items.map((item, i) => {
    const minor = toMinor(item.unitPrice, currency)
    if (minor === null) details.push({ path: `items[${i}].unitPrice`, message: `must have at most ${minorDigits(currency)} decimal places for ${currency}` })
    return { productId: item.productId ?? null, description: item.description, quantity: item.quantity, unitPrice: minor ?? 0 }
  })
  if (details.length) throw new InvalidError(details)
  const total = stored.reduce((sum, i) => sum + i.unitPrice * i.quantity, 0)
  if (total > MAX_MINOR) throw new InvalidError([{ path: 'items', message: 'order total is too large' }])
  return { items: stored, total }
}

/** The stored customer column (also what orderJson() relies on). @internal exported for tests */
export const customerJson = (c: OrderCustomerValue) =>
  JSON.stringify({ firstName: c.firstName, lastName: c.lastName, email: c.email, ...(c.phone ? { phone: c.phone } : {}) })

export async function createOrder(ctx: TenantContext, input: CreateOrderInput): Promise<Rendered<Order>> {
  const priced = _priceItems(input.items, input.currency)
  return withTx(ctx.engine, async (scope) => {
    await assertRefs(scope.tx, ctx.tenantId, _refs(input.customerId, input.items))
    const customer = input.customer ?? (await _contact(scope, ctx, input.customerId!))
    const now = ctx.clock.now().toISOString()
    const n = await ctx.engine.nextCounter(scope.tx, ctx.tenantId, 'order')
    const row: OrderRow = {
      id: newId('ord'),
      tenant_id: ctx.tenantId,
      order_number: `ORD-${String(n).padStart(6, '0')}`,
      status: 'pending',
      customer_id: input.customerId ?? null,
      customer: customerJson(customer),
      items: JSON.stringify(priced.items),
      total: priced.total,
      currency: input.currency,
      travel_date: input.travelDate ?? null,
      notes: input.notes ?? null,
      metadata: toMetadataJson(input.metadata),
      created_at: now,
      updated_at: now,
    }
    await repo.insertOrder(scope.tx, row)
    const order = Rendered.of(orderJson(row), row, toOrder)
    await emit(scope, ctx, 'order.created', order)
    return order
  })
}

/**
 * References to check: the customer, and each item's product unless the order already
 * names it (so an order whose product was since deleted can still be edited).
 */
function _refs(customerId: string | null | undefined, items: { productId?: string | null }[] | undefined, known = new Set<string | null>()): Record<string, [RefField, string | null | undefined]> {
  const refs: Record<string, [RefField, string | null | undefined]> = { customerId: ['customerId', customerId] }
  items?.forEach((item, i) => {
    if (!known.has(item.productId ?? null)) refs[`items[${i}].productId`] = ['productId', item.productId]
  })
  return refs
}

/** The customer's name, email and phone, copied into the order; the reference was checked before. */
async function _contact(scope: TxScope, ctx: TenantContext, customerId: string): Promise<OrderCustomerValue> {
  const contact = await findCustomerContact(scope.tx, ctx.tenantId, customerId)
  if (!contact) throw new InvalidError([{ path: 'customerId', message: `no customer ${customerId}` }])
  return contact
}

/** The order as its JSON, rendered from the row (orderJson()); the Order itself is built only if read. */
export async function getOrder(ctx: TenantContext, id: string): Promise<Rendered<Order>> {
  const row = await repo.findOrder(ctx.db, ctx.tenantId, id)
  if (!row) throw new NotFoundError(`No order ${id}`)
  return Rendered.of(orderJson(row), row, toOrder)
}

export function listOrders(ctx: TenantContext, q: Omit<repo.OrderFilter, 'after'> & { cursor?: string }): ReturnType<typeof repo.listOrders> {
  return repo.listOrders(ctx.db, ctx.tenantId, { ...q, after: q.cursor })
}

export function updateOrder(ctx: TenantContext, id: string, input: UpdateOrderInput): Promise<Rendered<Order>> {
  return withTx(ctx.engine, async (scope) => {
    const row = await repo.findOrder(scope.tx, ctx.tenantId, id)
    if (!row) throw new NotFoundError(`No order ${id}`)
    const set: OrderUpdate = {}
    const terminal = TRANSITIONS[row.status as OrderStatus].length === 0
    const known = new Set((JSON.parse(row.items) as StoredItem[]).map((i) => i.productId))
    await assertRefs(scope.tx, ctx.tenantId, _refs(input.customerId, input.items, known))
    if (input.customerId !== undefined) set.customer_id = input.customerId
    if (input.customer !== undefined) set.customer = customerJson(input.customer)
    else if (input.customerId) set.customer = customerJson(await _contact(scope, ctx, input.customerId))
    if (input.items !== undefined || (input.currency !== undefined && input.currency !== row.currency)) {
      const currency = input.currency ?? row.currency
      const items = input.items ?? (JSON.parse(row.items) as StoredItem[]).map((i) => ({ ...i, unitPrice: toMajor(i.unitPrice, row.currency) }))
      const priced = _priceItems(items, currency)
      set.items = JSON.stringify(priced.items)
      set.total = priced.total
      set.currency = currency
    }
    if (input.travelDate !== undefined) set.travel_date = input.travelDate
    if (input.notes !== undefined) set.notes = input.notes
    if (input.metadata !== undefined) set.metadata = toMetadataJson(input.metadata)
    if (input.status !== undefined && input.status !== row.status) set.status = input.status
    const changed = changedColumns(row, set)
    if (changed.length === 0) return Rendered.of(orderJson(row), row, toOrder)
    if (terminal && changed.some((k) => k !== 'notes' && k !== 'metadata')) {
      throw new ConflictError(`Order ${id} is ${row.status}; only notes and metadata can still change`)
    }
    if (set.status !== undefined) _assertTransition(row, set.status as OrderStatus)
    return _save(ctx, scope, row, set)
  })
}

/** confirm / cancel actions: 409 when already there or not allowed from the current status. */
export function transitionOrder(ctx: TenantContext, id: string, to: 'confirmed' | 'cancelled'): Promise<Rendered<Order>> {
  return withTx(ctx.engine, async (scope) => {
    const row = await repo.findOrder(scope.tx, ctx.tenantId, id)
    if (!row) throw new NotFoundError(`No order ${id}`)
    if (row.status === to) throw new ConflictError(`Order ${id} is already ${to}`)
    _assertTransition(row, to)
    return _save(ctx, scope, row, { status: to })
  })
}

function _assertTransition(row: OrderRow, to: OrderStatus): void {
  if (!TRANSITIONS[row.status as OrderStatus].includes(to)) {
    throw new ConflictError(`Order ${row.id} cannot move from ${row.status} to ${to}`)
  }
}

async function _save(ctx: TenantContext, scope: TxScope, row: OrderRow, set: OrderUpdate): Promise<Rendered<Order>> {
  set.updated_at = ctx.clock.now().toISOString()
  await repo.updateOrder(scope.tx, ctx.tenantId, row.id, set)
  const changed = { ...row, ...set } as OrderRow
  const order = Rendered.of(orderJson(changed), changed, toOrder)
  if (set.status === 'confirmed') await emit(scope, ctx, 'order.confirmed', order)
  if (set.status === 'cancelled') await emit(scope, ctx, 'order.cancelled', order)
  await emit(scope, ctx, 'order.updated', order)
  return order
}

export async function deleteOrder(ctx: TenantContext, id: string): Promise<{ id: string; deleted: true }> {
  return withTx(ctx.engine, async (scope) => {
    if (!(await repo.deleteOrder(scope.tx, ctx.tenantId, id))) throw new NotFoundError(`No order ${id}`)
    return { id, deleted: true as const }
  })
}
