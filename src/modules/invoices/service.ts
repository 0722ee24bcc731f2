import type { TenantContext } from '../../context.ts'
import type { InvoiceRow, InvoiceUpdate } from '../../db/schema.ts'
import { withTx } from '../../engine/tx.ts'
import { emit } from '../../events/emit.ts'
import { ConflictError, InvalidError, NotFoundError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { toMajor } from '../../lib/money.ts'
import { changedColumns, toMetadataJson } from '../fields.ts'
import { assertRefs } from '../refs.ts'
import * as repo from './repo.ts'
import type { CreateInvoiceInput, Invoice, UpdateInvoiceInput } from './schema.ts'
import { linesInMajor, priceLines, toInvoice } from './view.ts'

export async function createInvoice(ctx: TenantContext, input: CreateInvoiceInput): Promise<Invoice> {
  const priced = priceLines(input.lines, input.currency)
  return withTx(ctx.engine, async (scope) => {
    await assertRefs(scope.tx, ctx.tenantId, { orderId: ['orderId', input.orderId], customerId: ['customerId', input.customerId] })
    const now = ctx.clock.now().toISOString()
    const n = await ctx.engine.nextCounter(scope.tx, ctx.tenantId, 'invoice')
    const row: InvoiceRow = {
      id: newId('inv'),
      tenant_id: ctx.tenantId,
      invoice_number: `INV-${String(n).padStart(6, '0')}`,
      order_id: input.orderId ?? null,
      customer_id: input.customerId ?? null,
      status: 'open',
      lines: priced.lines,
      total: priced.total,
      amount_paid: 0,
      currency: input.currency,
      due_date: input.dueDate ?? null,
      paid_at: null,
      metadata: toMetadataJson(input.metadata),
      created_at: now,
      updated_at: now,
    }
    await repo.insertInvoice(scope.tx, row)
    const invoice = toInvoice(row)
    await emit(scope, ctx, 'invoice.created', invoice)
    return invoice
  })
}

export async function getInvoice(ctx: TenantContext, id: string): Promise<Invoice> {
  const row = await repo.findInvoice(ctx.db, ctx.tenantId, id)
  if (!row) throw new NotFoundError(`No invoice ${id}`)
  return toInvoice(row)
}

export function listInvoices(ctx: TenantContext, q: Omit<repo.InvoiceFilter, 'after'> & { cursor?: string }): ReturnType<typeof repo.listInvoices> {
  return repo.listInvoices(ctx.db, ctx.tenantId, { ...q, after: q.cursor })
}

/**
 * Only an open invoice changes (409 otherwise). `status` may only become `void`, and only
 * while nothing is paid; the total may not drop below amountPaid, and when it drops to
 * exactly amountPaid the invoice is paid [invoice.paid]. Otherwise no event.
 */
export function updateInvoice(ctx: TenantContext, id: string, input: UpdateInvoiceInput): Promise<Invoice> {
  return withTx(ctx.engine, async (scope) => {
    const row = await repo.findInvoice(scope.tx, ctx.tenantId, id)
    if (!row) throw new NotFoundError(`No invoice ${id}`)
    const set: InvoiceUpdate = {}
    if (input.lines !== undefined || (input.currency !== undefined && input.currency !== row.currency)) {
      const currency = input.currency ?? row.currency
      const priced = priceLines(input.lines ?? linesInMajor(row), currency)
      set.lines = priced.lines
      set.total = priced.total
      set.currency = currency
    }
    if (input.orderId !== undefined) set.order_id = input.orderId
    if (input.customerId !== undefined) set.customer_id = input.customerId
    if (input.dueDate !== undefined) set.due_date = input.dueDate
    if (input.metadata !== undefined) set.metadata = toMetadataJson(input.metadata)
    if (input.status !== undefined) set.status = input.status
    const changed = changedColumns(row, set)
    if (changed.length === 0) return toInvoice(row)
    if (row.status !== 'open') throw new ConflictError(`Invoice ${id} is ${row.status}; it can no longer change`)
    if (set.status === 'paid') throw new ConflictError(`Invoice ${id} is paid by POST /v1/invoices/${id}/pay or by payments, not by PATCH`)
    const paid = toMajor(row.amount_paid, row.currency)
    if (set.status === 'void' && row.amount_paid > 0) throw new ConflictError(`Invoice ${id} has ${paid} ${row.currency} paid; refund those payments before voiding it`)
    if (changed.includes('currency') && row.amount_paid > 0) throw new ConflictError(`Invoice ${id} has payments in ${row.currency}; its currency can no longer change`)
    if (set.total !== undefined && set.total < row.amount_paid) {
      throw new InvalidError([{ path: 'lines', message: `total ${toMajor(set.total, set.currency!)} would be less than amountPaid ${paid}` }])
    }
    await assertRefs(scope.tx, ctx.tenantId, {
      orderId: ['orderId', changed.includes('order_id') ? set.order_id : null],
      customerId: ['customerId', changed.includes('customer_id') ? set.customer_id : null],
    })
    const now = ctx.clock.now().toISOString()
    set.updated_at = now
    const settled = set.status === undefined && row.amount_paid > 0 && set.total === row.amount_paid
    if (settled) Object.assign(set, { status: 'paid', paid_at: now })
    await repo.updateInvoice(scope.tx, ctx.tenantId, id, set)
    const invoice = toInvoice({ ...row, ...set } as InvoiceRow)
    if (settled) await emit(scope, ctx, 'invoice.paid', invoice)
    return invoice
  })
}

/**
 * POST /pay: open → paid. The balance still open is taken as settled outside travelops, so
 * amountPaid becomes the total. 409 when the invoice is already paid or void.
 */
export function payInvoice(ctx: TenantContext, id: string): Promise<Invoice> {
  return withTx(ctx.engine, async (scope) => {
    const row = await repo.findInvoice(scope.tx, ctx.tenantId, id)
    if (!row) throw new NotFoundError(`No invoice ${id}`)
    if (row.status !== 'open') throw new ConflictError(`Invoice ${id} is ${row.status === 'paid' ? 'already paid' : row.status}`)
    const now = ctx.clock.now().toISOString()
    const set: InvoiceUpdate = { status: 'paid', amount_paid: row.total, paid_at: now, updated_at: now }
    await repo.updateInvoice(scope.tx, ctx.tenantId, id, set)
    const invoice = toInvoice({ ...row, ...set } as InvoiceRow)
    await emit(scope, ctx, 'invoice.paid', invoice)
    return invoice
  })
}

/** An invoice with money on it (paid, or open with payments) is kept for the books: 409. */
export function deleteInvoice(ctx: TenantContext, id: string): Promise<{ id: string; deleted: true }> {
  return withTx(ctx.engine, async (scope) => {
    const row = await repo.findInvoice(scope.tx, ctx.tenantId, id)
    if (!row) throw new NotFoundError(`No invoice ${id}`)
    if (row.status === 'paid') throw new ConflictError(`Invoice ${id} is paid; paid invoices cannot be deleted`)
    if (row.amount_paid > 0) throw new ConflictError(`Invoice ${id} has payments recorded; refund them before deleting it`)
    await repo.deleteInvoice(scope.tx, ctx.tenantId, id)
    return { id, deleted: true as const }
  })
}
