import type { TenantContext } from '../../context.ts'
import type { PaymentRow, PaymentUpdate } from '../../db/schema.ts'
import { withTx } from '../../engine/tx.ts'
import { emit } from '../../events/emit.ts'
import { ConflictError, InvalidError, NotFoundError, type ErrorDetail } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { jsonString } from '../../lib/json.ts'
import { toMajor } from '../../lib/money.ts'
import { toMetadataJson, minorAt, parseJson } from '../fields.ts'
import { addToAmountPaid, assertPayable } from '../invoices/index.ts'
import { assertRefs } from '../refs.ts'
import * as repo from './repo.ts'
import type { CreatePaymentInput, Payment, PaymentStatus, RefundPaymentInput } from './schema.ts'

export function toPayment(row: PaymentRow): Payment {
  return {
    id: row.id,
    amount: toMajor(row.amount, row.currency),
    currency: row.currency,
    method: row.method as Payment['method'],
    orderId: row.order_id,
    invoiceId: row.invoice_id,
    reference: row.reference,
    status: row.status as PaymentStatus,
    refundedAmount: toMajor(row.refunded_amount, row.currency),
    metadata: parseJson<Record<string, string>>(row.metadata) ?? {},
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

/**
 * `JSON.stringify(toPayment(row))` written straight from the row: the metadata passed
 * through as stored (JSON.stringify's own output, which re-parsing and re-serialising gives back
 * byte for byte). Checked against toPayment() on random rows (test/unit/record-json.test.ts).
 */
export function paymentJson(row: PaymentRow): string {
  return `{"id":${JSON.stringify(row.id)},"amount":${toMajor(row.amount, row.currency)},"currency":${JSON.stringify(row.currency)},"method":${JSON.stringify(row.method)},"orderId":${jsonString(row.order_id)},"invoiceId":${jsonString(row.invoice_id)},"reference":${jsonString(row.reference)},"status":${JSON.stringify(row.status)},"refundedAmount":${toMajor(row.refunded_amount, row.currency)},"metadata":${row.metadata ?? '{}'},"createdAt":${JSON.stringify(row.created_at)},"updatedAt":${JSON.stringify(row.updated_at)}}`
}

/**
 * Records a payment [payment.received]. For an invoice: same currency, not more than its
 * open balance, and in the same transaction its amountPaid grows — reaching the total makes
 * it paid [invoice.paid].
 */
export async function createPayment(ctx: TenantContext, input: CreatePaymentInput): Promise<Payment> {
  const amount = _minor(input.amount, input.currency)
  return withTx(ctx.engine, async (scope) => {
    await assertRefs(scope.tx, ctx.tenantId, { orderId: ['orderId', input.orderId], invoiceId: ['invoiceId', input.invoiceId] })
    if (input.invoiceId) await assertPayable(scope.tx, ctx.tenantId, input.invoiceId, amount, input.currency)
    const now = ctx.clock.now().toISOString()
    const row: PaymentRow = {
      id: newId('pay'),
      tenant_id: ctx.tenantId,
      amount,
      currency: input.currency,
      method: input.method,
      order_id: input.orderId ?? null,
      invoice_id: input.invoiceId ?? null,
      reference: input.reference ?? null,
      status: 'received',
      refunded_amount: 0,
      metadata: toMetadataJson(input.metadata),
      created_at: now,
      updated_at: now,
    }
    await repo.insertPayment(scope.tx, row)
    const payment = toPayment(row)
    await emit(scope, ctx, 'payment.received', payment)
    if (row.invoice_id) await addToAmountPaid(scope, ctx, row.invoice_id, amount, now)
    return payment
  })
}

export async function getPayment(ctx: TenantContext, id: string): Promise<Payment> {
  const row = await repo.findPayment(ctx.db, ctx.tenantId, id)
  if (!row) throw new NotFoundError(`No payment ${id}`)
  return toPayment(row)
}

export function listPayments(ctx: TenantContext, q: Omit<repo.PaymentFilter, 'after'> & { cursor?: string }): ReturnType<typeof repo.listPayments> {
  return repo.listPayments(ctx.db, ctx.tenantId, { ...q, after: q.cursor })
}

/**
 * Refunds `amount` (default: all that is left) [payment.refunded]: 409 when nothing is left,
 * 422 for more than is left. The linked invoice's amountPaid shrinks by the same amount.
 */
export function refundPayment(ctx: TenantContext, id: string, input: RefundPaymentInput): Promise<Payment> {
  return withTx(ctx.engine, async (scope) => {
    const row = await repo.findPayment(scope.tx, ctx.tenantId, id)
    if (!row) throw new NotFoundError(`No payment ${id}`)
    const left = row.amount - row.refunded_amount
    if (left <= 0) throw new ConflictError(`Payment ${id} is already fully refunded`)
    const amount = input?.amount === undefined ? left : _minor(input.amount, row.currency)
    if (amount > left) {
      throw new InvalidError([{ path: 'amount', message: `must be at most ${toMajor(left, row.currency)}, what is left of payment ${id}` }])
    }
    const refunded = row.refunded_amount + amount
    const now = ctx.clock.now().toISOString()
    const set: PaymentUpdate = { refunded_amount: refunded, status: refunded === row.amount ? 'refunded' : 'partially_refunded', updated_at: now }
    await repo.updatePayment(scope.tx, ctx.tenantId, id, set)
    const payment = toPayment({ ...row, ...set } as PaymentRow)
    await emit(scope, ctx, 'payment.refunded', payment)
    if (row.invoice_id) await addToAmountPaid(scope, ctx, row.invoice_id, -amount, now)
    return payment
  })
}

function _minor(amount: number, currency: string): number {
  const details: ErrorDetail[] = []
  const minor = minorAt(amount, currency, 'amount', details)
  if (details.length) throw new InvalidError(details)
  return minor
}
