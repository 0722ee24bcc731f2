import * as v from 'valibot'
import { Currency, IdRef, Metadata, optionalText, PositiveMoney } from '../fields.ts'
import * as out from '../view-fields.ts'

export const PAYMENT_METHODS = ['card', 'bank_transfer', 'cash', 'other'] as const
export const PAYMENT_STATUSES = ['received', 'partially_refunded', 'refunded'] as const
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number]

export const CreatePaymentBody = v.strictObject({
  amount: PositiveMoney,
  currency: Currency,
  method: v.picklist(PAYMENT_METHODS, `must be one of ${PAYMENT_METHODS.join(', ')}`),
  orderId: v.optional(v.nullable(IdRef('ord'))),
  invoiceId: v.optional(v.nullable(IdRef('inv'))),
  /** The payment provider's or bank's reference. */
  reference: optionalText(200),
  metadata: v.optional(v.nullable(Metadata)),
})

/** No body, `{}`, or `{ amount }`; without an amount everything not yet refunded is refunded. */
export const RefundPaymentBody = v.optional(v.strictObject({ amount: v.optional(PositiveMoney) }))

export const PAYMENT_READ_ONLY = ['id', 'status', 'refundedAmount', 'createdAt', 'updatedAt', 'tenantId'] as const

export const ListPaymentsQuery = {
  orderId: v.optional(IdRef('ord')),
  invoiceId: v.optional(IdRef('inv')),
}

export type CreatePaymentInput = v.InferOutput<typeof CreatePaymentBody>
export type RefundPaymentInput = v.InferOutput<typeof RefundPaymentBody>

/** The payment as the API shows it. */
export const PaymentView = v.pipe(
  v.strictObject({
    id: out.id('pay'),
    amount: v.pipe(v.number(), v.gtValue(0), v.description('Amount received, in major units of `currency`')),
    currency: out.Currency,
    method: v.picklist(PAYMENT_METHODS),
    orderId: out.ref('ord', 'The order paid for, if any'),
    invoiceId: out.ref('inv', 'The invoice paid, if any; its `amountPaid` includes this payment'),
    reference: out.optionalText('The payment provider\'s or bank\'s reference'),
    status: v.picklist(PAYMENT_STATUSES),
    refundedAmount: v.pipe(out.Money, v.description('Refunded so far, in major units of `currency`; at most `amount`')),
    metadata: out.Metadata,
    createdAt: out.createdAt,
    updatedAt: out.updatedAt,
  }),
  v.title('Payment'),
  v.description('A payment as the API returns it (GET, the answers of writes, and the `data` of payment events)'),
)

export type Payment = v.InferOutput<typeof PaymentView>
