import assert from 'node:assert/strict'
import { assertDetail, billingScenarios, create, createOrder, get, invoiceBody, paymentBody, type BillingFixture } from '../helpers/billing.ts'

interface F extends BillingFixture {
  orderId: string
  otherOrderId: string
  invoice: any
  paidInvoice: any
  otherInvoice: any
  pay: any
  otherPay: any
}

const MISSING = 'pay_01900000-0000-7000-8000-000000000000'
const tour = (unitPrice: number) => invoiceBody({ lines: [{ description: 'Tour', quantity: 1, unitPrice }] })

billingScenarios<F>('payments API', async (base) => {
  const orderId = await createOrder(base.tenant)
  const otherOrderId = await createOrder(base.other)
  const invoice = await create(base.tenant, '/v1/invoices', tour(100))
  const paidInvoice = await create(base.tenant, `/v1/invoices/${(await create(base.tenant, '/v1/invoices', tour(10))).id}/pay`)
  const otherInvoice = await create(base.other, '/v1/invoices', tour(100))
  const pay = await create(base.tenant, '/v1/payments', paymentBody({ orderId, reference: 'ch_1', metadata: { till: '3' } }))
  const otherPay = await create(base.other, '/v1/payments', paymentBody())
  return { ...base, orderId, otherOrderId, invoice, paidInvoice, otherInvoice, pay, otherPay }
}, [
  // create
  {
    name: 'a payment on its own', method: 'POST', path: '/v1/payments', status: 201, events: ['payment.received'],
    body: (f: F) => paymentBody({ amount: 12.5, method: 'bank_transfer', orderId: f.orderId, reference: 'SEPA 42' }),
    check: (r, f) => {
      const d = r.body.data
      assert.match(d.id, /^pay_/)
      assert.deepEqual(
        [d.amount, d.currency, d.method, d.orderId, d.invoiceId, d.reference, d.status, d.refundedAmount, d.metadata],
        [12.5, 'EUR', 'bank_transfer', f.orderId, null, 'SEPA 42', 'received', 0, {}],
      )
      assert.equal(d.createdAt, d.updatedAt)
    },
  },
  {
    name: 'part of an invoice: amountPaid grows, still open', method: 'POST', path: '/v1/payments', status: 201, events: ['payment.received'],
    body: (f: F) => paymentBody({ amount: 60, invoiceId: f.invoice.id }),
    check: async (r, f) => {
      assert.equal(r.body.data.invoiceId, f.invoice.id)
      const inv = await get(f.tenant, `/v1/invoices/${f.invoice.id}`)
      assert.deepEqual([inv.status, inv.amountPaid, inv.paidAt], ['open', 60, null])
    },
  },
  { name: 'more than the open balance', method: 'POST', path: '/v1/payments', status: 422, body: (f: F) => paymentBody({ amount: 40.01, invoiceId: f.invoice.id }), check: (r) => assertDetail(r, 'amount', /at most 40, the open balance/) },
  { name: "another currency than the invoice's", method: 'POST', path: '/v1/payments', status: 422, body: (f: F) => paymentBody({ amount: 1, currency: 'USD', invoiceId: f.invoice.id }), check: (r) => assertDetail(r, 'currency', /must be EUR/) },
  {
    name: 'the rest settles the invoice in the same request', method: 'POST', path: '/v1/payments', status: 201, events: ['payment.received', 'invoice.paid'],
    body: (f: F) => paymentBody({ amount: 40, invoiceId: f.invoice.id }),
    check: async (r, f) => {
      const inv = await get(f.tenant, `/v1/invoices/${f.invoice.id}`)
      assert.deepEqual([inv.status, inv.amountPaid, inv.paidAt], ['paid', 100, r.body.data.createdAt])
    },
  },
  { name: 'a paid invoice takes no more payments', method: 'POST', path: '/v1/payments', status: 409, body: (f: F) => paymentBody({ amount: 1, invoiceId: f.paidInvoice.id }) },
  { name: 'no key', method: 'POST', path: '/v1/payments', as: 'anonymous', status: 401, body: paymentBody() },
  { name: 'key without payments:write', method: 'POST', path: '/v1/payments', as: 'unscoped', status: 403, body: paymentBody(), check: (r) => assert.match(r.body.error.message, /payments:write/) },
  { name: 'amount 0', method: 'POST', path: '/v1/payments', status: 422, body: paymentBody({ amount: 0 }), check: (r) => assertDetail(r, 'amount', /greater than 0/) },
  { name: 'negative amount', method: 'POST', path: '/v1/payments', status: 422, body: paymentBody({ amount: -5 }), check: (r) => assertDetail(r, 'amount', /greater than 0/) },
  { name: 'amount as a string', method: 'POST', path: '/v1/payments', status: 422, body: paymentBody({ amount: '5' }), check: (r) => assertDetail(r, 'amount') },
  { name: 'too many decimals', method: 'POST', path: '/v1/payments', status: 422, body: paymentBody({ amount: 10.001 }), check: (r) => assertDetail(r, 'amount', /at most 2 decimal places for EUR/) },
  { name: 'decimals in a zero-decimal currency', method: 'POST', path: '/v1/payments', status: 422, body: paymentBody({ amount: 10.5, currency: 'JPY' }), check: (r) => assertDetail(r, 'amount', /JPY/) },
  { name: 'three decimals are fine in KWD', method: 'POST', path: '/v1/payments', status: 201, events: ['payment.received'], body: paymentBody({ amount: 10.125, currency: 'KWD' }), check: (r) => assert.equal(r.body.data.amount, 10.125) },
  { name: 'unknown method', method: 'POST', path: '/v1/payments', status: 422, body: paymentBody({ method: 'cheque' }), check: (r) => assertDetail(r, 'method', /card, bank_transfer, cash, other/) },
  { name: 'missing fields', method: 'POST', path: '/v1/payments', status: 422, body: {}, check: (r) => { for (const p of ['amount', 'currency', 'method']) assertDetail(r, p, /required/) } },
  { name: 'unknown field', method: 'POST', path: '/v1/payments', status: 422, body: paymentBody({ fee: 1 }), check: (r) => assertDetail(r, 'fee', /unknown field/) },
  ...(['status', 'refundedAmount', 'id', 'createdAt'] as const).map((field) => ({
    name: `read-only ${field}`, method: 'POST', path: '/v1/payments', status: 422, body: paymentBody({ [field]: field === 'refundedAmount' ? 0 : 'x' }),
    check: (r: any) => assertDetail(r, field, /read-only/),
  })),
  { name: "another tenant's invoice", method: 'POST', path: '/v1/payments', status: 422, body: (f: F) => paymentBody({ invoiceId: f.otherInvoice.id }), check: (r) => assertDetail(r, 'invoiceId', /no invoice/) },
  { name: "another tenant's order", method: 'POST', path: '/v1/payments', status: 422, body: (f: F) => paymentBody({ orderId: f.otherOrderId }), check: (r) => assertDetail(r, 'orderId', /no order/) },
  { name: 'malformed invoice id', method: 'POST', path: '/v1/payments', status: 422, body: paymentBody({ invoiceId: 'INV-000001' }), check: (r) => assertDetail(r, 'invoiceId', /inv_/) },
  { name: "their invoice's balance untouched", method: 'GET', path: (f) => `/v1/invoices/${f.otherInvoice.id}`, as: 'other', status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.otherInvoice) },

  // no update, no delete
  { name: 'PATCH is not allowed', method: 'PATCH', path: (f) => `/v1/payments/${f.pay.id}`, status: 405, code: 'method_not_allowed', body: { reference: 'x' }, check: (r) => assert.equal(r.headers.get('allow'), 'GET, HEAD') },
  { name: 'DELETE is not allowed', method: 'DELETE', path: (f) => `/v1/payments/${f.pay.id}`, status: 405, code: 'method_not_allowed' },
  { name: 'still there after PATCH and DELETE', method: 'GET', path: (f) => `/v1/payments/${f.pay.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.pay) },

  // list and read
  {
    name: 'list: own only, newest first', method: 'GET', path: '/v1/payments?limit=100', status: 200,
    check: (r, f) => {
      const ids = r.body.data.map((p: any) => p.id)
      assert.equal(ids.length, 5)
      assert.ok(ids.includes(f.pay.id) && !ids.includes(f.otherPay.id))
      assert.deepEqual(ids, [...ids].sort().reverse())
    },
  },
  { name: 'list: filter invoiceId', method: 'GET', path: (f) => `/v1/payments?invoiceId=${f.invoice.id}`, status: 200, check: (r, f) => { assert.deepEqual(r.body.data.map((p: any) => p.amount), [40, 60]); for (const p of r.body.data) assert.equal(p.invoiceId, f.invoice.id) } },
  { name: 'list: filter orderId', method: 'GET', path: (f) => `/v1/payments?orderId=${f.orderId}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data.map((p: any) => p.orderId), [f.orderId, f.orderId]) },
  { name: "list: their invoice's payments are not ours", method: 'GET', path: (f) => `/v1/payments?invoiceId=${f.otherInvoice.id}`, status: 200, check: (r) => assert.deepEqual(r.body.data, []) },
  { name: 'list: other tenant', method: 'GET', path: '/v1/payments', as: 'other', status: 200, check: (r, f) => assert.deepEqual(r.body.data.map((p: any) => p.id), [f.otherPay.id]) },
  { name: 'list: bad invoiceId filter', method: 'GET', path: '/v1/payments?invoiceId=inv_1', status: 400 },
  { name: 'list: unknown parameter', method: 'GET', path: '/v1/payments?status=received', status: 400, check: (r) => assert.match(r.body.error.message, /unknown query parameter 'status'/) },
  { name: 'list: key without scope', method: 'GET', path: '/v1/payments', as: 'unscoped', status: 403 },
  { name: 'read', method: 'GET', path: (f) => `/v1/payments/${f.pay.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, { ...f.pay, reference: 'ch_1', metadata: { till: '3' } }) },
  { name: 'read: unknown id', method: 'GET', path: `/v1/payments/${MISSING}`, status: 404 },
  { name: 'read: malformed id', method: 'GET', path: '/v1/payments/pay_', status: 404 },
  { name: "read: another tenant's", method: 'GET', path: (f) => `/v1/payments/${f.otherPay.id}`, status: 404 },
  { name: 'read: no key', method: 'GET', path: (f) => `/v1/payments/${f.pay.id}`, as: 'anonymous', status: 401 },

  // refund
  { name: 'refund: more than the payment', method: 'POST', path: (f) => `/v1/payments/${f.pay.id}/refund`, status: 422, body: { amount: 50.01 }, check: (r) => assertDetail(r, 'amount', /at most 50, what is left/) },
  { name: 'refund: zero', method: 'POST', path: (f) => `/v1/payments/${f.pay.id}/refund`, status: 422, body: { amount: 0 }, check: (r) => assertDetail(r, 'amount', /greater than 0/) },
  { name: 'refund: negative', method: 'POST', path: (f) => `/v1/payments/${f.pay.id}/refund`, status: 422, body: { amount: -1 }, check: (r) => assertDetail(r, 'amount') },
  { name: 'refund: too many decimals', method: 'POST', path: (f) => `/v1/payments/${f.pay.id}/refund`, status: 422, body: { amount: 0.005 }, check: (r) => assertDetail(r, 'amount', /decimal places/) },
  { name: 'refund: unknown field', method: 'POST', path: (f) => `/v1/payments/${f.pay.id}/refund`, status: 422, body: { reason: 'x' }, check: (r) => assertDetail(r, 'reason', /unknown field/) },
  { name: "refund: another tenant's payment", method: 'POST', path: (f) => `/v1/payments/${f.otherPay.id}/refund`, status: 404 },
  { name: 'refund: unknown payment', method: 'POST', path: `/v1/payments/${MISSING}/refund`, status: 404 },
  { name: 'refund: key without scope', method: 'POST', path: (f) => `/v1/payments/${f.pay.id}/refund`, as: 'unscoped', status: 403, check: (r) => assert.match(r.body.error.message, /payments:write/) },
  {
    name: 'refund: part', method: 'POST', path: (f) => `/v1/payments/${f.pay.id}/refund`, status: 200, events: ['payment.refunded'], body: { amount: 20.25 },
    check: (r) => assert.deepEqual([r.body.data.status, r.body.data.refundedAmount, r.body.data.amount], ['partially_refunded', 20.25, 50]),
  },
  { name: 'refund: more than is left', method: 'POST', path: (f) => `/v1/payments/${f.pay.id}/refund`, status: 422, body: { amount: 29.76 }, check: (r) => assertDetail(r, 'amount', /at most 29.75/) },
  {
    name: 'refund: the rest by default', method: 'POST', path: (f) => `/v1/payments/${f.pay.id}/refund`, status: 200, events: ['payment.refunded'],
    check: (r) => assert.deepEqual([r.body.data.status, r.body.data.refundedAmount], ['refunded', 50]),
  },
  { name: 'refund: already fully refunded', method: 'POST', path: (f) => `/v1/payments/${f.pay.id}/refund`, status: 409, code: 'conflict', body: {} },
  { name: 'refund: fully refunded wins over a bad amount', method: 'POST', path: (f) => `/v1/payments/${f.pay.id}/refund`, status: 409, body: { amount: 1000 } },
  { name: "their payment untouched", method: 'GET', path: (f) => `/v1/payments/${f.otherPay.id}`, as: 'other', status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.otherPay) },
])
