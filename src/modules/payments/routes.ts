import { defineRoute, type RouteDef } from '../../http/define-route.ts'
import { toPage } from '../../http/pagination.ts'
import { CreatePaymentBody, ListPaymentsQuery, PAYMENT_READ_ONLY, PaymentView, RefundPaymentBody } from './schema.ts'
import * as payments from './service.ts'

const read = { resource: 'payments', action: 'read' } as const
const write = { resource: 'payments', action: 'write' } as const
const tag = 'Payments'
const params = { id: 'pay' } as const

/** Payments are records of money moved: no PATCH or DELETE (405), refunds instead. */
export const paymentRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET', path: '/v1/payments', scope: read, tag, summary: 'List payments, newest first', list: true, query: ListPaymentsQuery,
    response: PaymentView,
    handler: async ({ ctx, query }) => toPage(await payments.listPayments(ctx, query), query.limit, payments.toPayment, payments.paymentJson),
  }),
  defineRoute({
    method: 'POST', path: '/v1/payments', scope: write, tag, summary: 'Record a payment', status: 201,
    body: CreatePaymentBody, readOnly: PAYMENT_READ_ONLY, events: ['payment.received', 'invoice.paid'],
    response: PaymentView,
    handler: ({ ctx, body }) => payments.createPayment(ctx, body),
  }),
  defineRoute({
    method: 'GET', path: '/v1/payments/:id', scope: read, tag, summary: 'Read a payment', params,
    response: PaymentView,
    handler: ({ ctx, params }) => payments.getPayment(ctx, params.id!),
  }),
  defineRoute({
    method: 'POST', path: '/v1/payments/:id/refund', scope: write, tag, summary: 'Refund a payment, in part or in full', params,
    rules: ['an `amount` over what is left of the payment (422)', 'an `amount` with more decimals than the payment\'s currency has (422)'],
    body: RefundPaymentBody, events: ['payment.refunded'],
    response: PaymentView,
    handler: ({ ctx, params, body }) => payments.refundPayment(ctx, params.id!, body),
  }),
]
