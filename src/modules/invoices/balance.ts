import type { TenantContext } from '../../context.ts'
import type { Db } from '../../db/connect.ts'
import type { InvoiceRow, InvoiceUpdate } from '../../db/schema.ts'
import type { Tx, TxScope } from '../../db/tx.ts'
import { emit } from '../../events/emit.ts'
import { ConflictError, InvalidError } from '../../lib/errors.ts'
import { toMajor } from '../../lib/money.ts'
import * as repo from './repo.ts'
import { toInvoice } from './view.ts'

/**
 * How payments keep an invoice's amountPaid in step. amountPaid is the money received for
 * the invoice and kept: payments add to it, refunds take it back. Status follows only
 * upwards: an open invoice whose amountPaid reaches its total becomes paid; a refund never
 * reopens a paid invoice (it stays paid, with the lower amountPaid).
 */

/**
 * A new payment of `amount` minor units in `currency` for the invoice: 409 unless the invoice
 * is open; 422 on another currency or an amount over the open balance (total − amountPaid).
 * The invoice must exist (checked by assertRefs before).
 */
export async function assertPayable(db: Db | Tx, tenantId: string, invoiceId: string, amount: number, currency: string): Promise<void> {
  const row = await repo.findInvoice(db, tenantId, invoiceId)
  if (!row) throw new InvalidError([{ path: 'invoiceId', message: `no invoice ${invoiceId}` }])
  if (row.status !== 'open') throw new ConflictError(`Invoice ${invoiceId} is ${row.status}; it takes no more payments`)
  if (currency !== row.currency) throw new InvalidError([{ path: 'currency', message: `must be ${row.currency}, the currency of invoice ${invoiceId}` }])
  const balance = row.total - row.amount_paid
  if (amount > balance) {
    throw new InvalidError([{ path: 'amount', message: `must be at most ${toMajor(balance, row.currency)}, the open balance of invoice ${invoiceId}` }])
  }
}

/**
 * Adds `delta` minor units (a payment; a refund is negative) to amountPaid, in the caller's
 * transaction, at `now` (the payment's own timestamp). When a payment brings an open invoice
 * to its total, the invoice becomes paid and invoice.paid is emitted with the invoice as GET
 * shows it afterwards.
 */
export async function addToAmountPaid(scope: TxScope, ctx: TenantContext, invoiceId: string, delta: number, now: string): Promise<void> {
  const row = await repo.findInvoice(scope.tx, ctx.tenantId, invoiceId)
  if (!row) return // deleted (only possible once nothing was left paid on it): nothing to keep in step
  const amountPaid = row.amount_paid + delta
  const set: InvoiceUpdate = { amount_paid: amountPaid, updated_at: now }
  const settled = row.status === 'open' && delta > 0 && amountPaid >= row.total
  if (settled) Object.assign(set, { status: 'paid', paid_at: now })
  await repo.updateInvoice(scope.tx, ctx.tenantId, invoiceId, set)
  if (settled) await emit(scope, ctx, 'invoice.paid', toInvoice({ ...row, ...set } as InvoiceRow))
}
