import * as v from 'valibot'
import { Currency, IdRef, Metadata, optionalText, PositiveMoney } from '../fields.ts'

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
export interface Payment {
  id: string
  amount: number
  currency: string
  method: (typeof PAYMENT_METHODS)[number]
  orderId: string | null
  invoiceId: string | null
  reference: string | null
  status: PaymentStatus
  refundedAmount: number
  metadata: Record<string, string>
  createdAt: string
  updatedAt: string
}
