import assert from 'node:assert/strict'
import { assertDetail, billingScenarios, create, createOrder, get, insertCustomer, invoiceBody, type BillingFixture } from '../helpers/billing.ts'

interface F extends BillingFixture {
  orderId: string
  otherOrderId: string
  customerId: string
  otherCustomerId: string
  open: any
  toPay: any
  toVoid: any
  doomed: any
  partly: any
  otherInv: any
}

const MISSING = 'inv_01900000-0000-7000-8000-000000000000'

billingScenarios<F>('invoices API', async (base) => {
  const orderId = await createOrder(base.tenant)
  const otherOrderId = await createOrder(base.other)
  const customerId = await insertCustomer(base.app, base.tenant.id)
  const otherCustomerId = await insertCustomer(base.app, base.other.id)
  const open = await create(base.tenant, '/v1/invoices', invoiceBody({ orderId, metadata: { po: '77' } }))
  const toPay = await create(base.tenant, '/v1/invoices', invoiceBody())
  const toVoid = await create(base.tenant, '/v1/invoices', invoiceBody())
  const doomed = await create(base.tenant, '/v1/invoices', invoiceBody())
  const partly = await create(base.tenant, '/v1/invoices', invoiceBody({ lines: [{ description: 'Tour', quantity: 1, unitPrice: 100 }] }))
  await create(base.tenant, '/v1/payments', { amount: 40, currency: 'EUR', method: 'cash', invoiceId: partly.id })
  const otherInv = await create(base.other, '/v1/invoices', invoiceBody())
  return { ...base, orderId, otherOrderId, customerId, otherCustomerId, open, toPay, toVoid, doomed, partly: await get(base.tenant, `/v1/invoices/${partly.id}`), otherInv }
}, [
  // create
  {
    name: 'open invoice with numbered lines and exact total', method: 'POST', path: '/v1/invoices', status: 201, events: ['invoice.created'],
    body: (f: F) => ({
      orderId: f.orderId, customerId: f.customerId, currency: 'EUR', dueDate: '2027-05-01', metadata: { po: '12' },
      lines: [{ description: 'Cruise', quantity: 3, unitPrice: 0.1 }, { description: 'Guide', quantity: 1, unitPrice: 19.99 }],
    }),
    check: (r, f) => {
      const d = r.body.data
      assert.match(d.id, /^inv_/)
      assert.equal(d.invoiceNumber, 'INV-000006') // the setup made five for this tenant (and one for the other)
      assert.equal(d.status, 'open')
      assert.deepEqual(d.lines, [
        { description: 'Cruise', quantity: 3, unitPrice: 0.1, total: 0.3 },
        { description: 'Guide', quantity: 1, unitPrice: 19.99, total: 19.99 },
      ])
      assert.equal(d.total, 20.29)
      assert.equal(d.amountPaid, 0)
      assert.equal(d.paidAt, null)
      assert.deepEqual([d.orderId, d.customerId, d.dueDate, d.currency], [f.orderId, f.customerId, '2027-05-01', 'EUR'])
    },
  },
  {
    name: 'minimal: optional fields null', method: 'POST', path: '/v1/invoices', status: 201, events: ['invoice.created'],
    body: { lines: [{ description: 'Room', quantity: 1, unitPrice: 5000 }], currency: 'JPY' },
    check: (r) => {
      const d = r.body.data
      assert.deepEqual([d.orderId, d.customerId, d.dueDate, d.paidAt, d.metadata, d.total], [null, null, null, null, {}, 5000])
    },
  },
  { name: 'no key', method: 'POST', path: '/v1/invoices', as: 'anonymous', status: 401, body: invoiceBody() },
  { name: 'key without invoices:write', method: 'POST', path: '/v1/invoices', as: 'unscoped', status: 403, body: invoiceBody(), check: (r) => assert.match(r.body.error.message, /invoices:write/) },
  { name: 'unknown field', method: 'POST', path: '/v1/invoices', status: 422, body: invoiceBody({ discount: 5 }), check: (r) => assertDetail(r, 'discount', /unknown field/) },
  ...(['invoiceNumber', 'total', 'amountPaid', 'status', 'paidAt', 'id', 'updatedAt'] as const).map((field) => ({
    name: `read-only ${field}`, method: 'POST', path: '/v1/invoices', status: 422, body: invoiceBody({ [field]: field === 'total' || field === 'amountPaid' ? 1 : 'x' }),
    check: (r: any) => assertDetail(r, field, /read-only/),
  })),
  {
    name: "read-only line total", method: 'POST', path: '/v1/invoices', status: 422,
    body: invoiceBody({ lines: [{ description: 'a', quantity: 1, unitPrice: 1 }, { description: 'b', quantity: 1, unitPrice: 1, total: 1 }] }),
    check: (r) => assertDetail(r, 'lines[1].total', /read-only/),
  },
  {
    name: 'too many decimals for the currency, by path', method: 'POST', path: '/v1/invoices', status: 422,
    body: invoiceBody({ lines: [{ description: 'a', quantity: 1, unitPrice: 1.5 }, { description: 'b', quantity: 1, unitPrice: 1.005 }] }),
    check: (r) => {
      assertDetail(r, 'lines[1].unitPrice', /at most 2 decimal places for EUR/)
      assert.equal(r.body.error.details.length, 1)
    },
  },
  {
    name: 'JPY has no decimals', method: 'POST', path: '/v1/invoices', status: 422,
    body: invoiceBody({ currency: 'JPY', lines: [{ description: 'a', quantity: 1, unitPrice: 1.5 }] }),
    check: (r) => assertDetail(r, 'lines[0].unitPrice', /at most 0 decimal places for JPY/),
  },
  {
    name: 'wrong types and ranges', method: 'POST', path: '/v1/invoices', status: 422,
    body: { lines: [{ description: '', quantity: 0, unitPrice: -1 }], currency: 'eur', dueDate: '01/05/2027' },
    check: (r) => { for (const p of ['lines[0].description', 'lines[0].quantity', 'lines[0].unitPrice', 'currency', 'dueDate']) assertDetail(r, p) },
  },
  { name: 'no lines', method: 'POST', path: '/v1/invoices', status: 422, body: invoiceBody({ lines: [] }), check: (r) => assertDetail(r, 'lines', /at least one line/) },
  { name: "another tenant's order", method: 'POST', path: '/v1/invoices', status: 422, body: (f: F) => invoiceBody({ orderId: f.otherOrderId }), check: (r) => assertDetail(r, 'orderId', /no order/) },
  {
    name: "another tenant's customer and an unknown order together", method: 'POST', path: '/v1/invoices', status: 422,
    body: (f: F) => invoiceBody({ customerId: f.otherCustomerId, orderId: 'ord_01900000-0000-7000-8000-000000000000' }),
    check: (r) => { assertDetail(r, 'customerId', /no customer/); assertDetail(r, 'orderId', /no order/) },
  },

  // list
  {
    name: 'list: own only, newest first', method: 'GET', path: '/v1/invoices?limit=100', status: 200,
    check: (r, f) => {
      const ids = r.body.data.map((i: any) => i.id)
      assert.ok(ids.includes(f.open.id) && !ids.includes(f.otherInv.id))
      assert.deepEqual(ids, [...ids].sort().reverse())
    },
  },
  { name: 'list: filter orderId', method: 'GET', path: (f) => `/v1/invoices?orderId=${f.orderId}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data.map((i: any) => i.orderId), [f.orderId, f.orderId]) },
  { name: 'list: other tenant sees only its own', method: 'GET', path: '/v1/invoices?limit=100', as: 'other', status: 200, check: (r, f) => assert.deepEqual(r.body.data.map((i: any) => i.id), [f.otherInv.id]) },
  { name: 'list: bad status filter', method: 'GET', path: '/v1/invoices?status=draft', status: 400, code: 'bad_request' },
  { name: 'list: unknown query parameter', method: 'GET', path: '/v1/invoices?customerId=x', status: 400, check: (r) => assert.match(r.body.error.message, /unknown query parameter/) },
  { name: 'list: key without scope', method: 'GET', path: '/v1/invoices', as: 'unscoped', status: 403, check: (r) => assert.match(r.body.error.message, /invoices:read/) },

  // read
  { name: 'read', method: 'GET', path: (f) => `/v1/invoices/${f.open.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.open) },
  { name: 'read: unknown id', method: 'GET', path: `/v1/invoices/${MISSING}`, status: 404 },
  { name: 'read: malformed id', method: 'GET', path: '/v1/invoices/INV-000001', status: 404 },
  { name: "read: another tenant's id", method: 'GET', path: (f) => `/v1/invoices/${f.otherInv.id}`, status: 404 },
  { name: 'read: no key', method: 'GET', path: (f) => `/v1/invoices/${f.open.id}`, as: 'anonymous', status: 401 },

  // update
  {
    name: 'patch: lines replace and the total follows; no event', method: 'PATCH', path: (f) => `/v1/invoices/${f.open.id}`, status: 200,
    body: { lines: [{ description: 'Cruise', quantity: 2, unitPrice: 0.1 }, { description: 'Tax', quantity: 1, unitPrice: 0.2 }], dueDate: null },
    check: (r, f) => {
      assert.equal(r.body.data.total, 0.4)
      assert.equal(r.body.data.dueDate, null)
      assert.equal(r.body.data.invoiceNumber, f.open.invoiceNumber)
    },
  },
  {
    name: 'patch: currency re-prices the stored lines', method: 'PATCH', path: (f) => `/v1/invoices/${f.open.id}`, status: 200, body: { currency: 'KWD', metadata: null },
    check: (r) => assert.deepEqual([r.body.data.currency, r.body.data.total, r.body.data.metadata], ['KWD', 0.4, {}]),
  },
  { name: 'patch: lines that JPY cannot hold', method: 'PATCH', path: (f) => `/v1/invoices/${f.open.id}`, status: 422, body: { currency: 'JPY' }, check: (r) => assertDetail(r, 'lines[0].unitPrice', /JPY/) },
  {
    name: 'patch: nothing changes', method: 'PATCH', path: (f) => `/v1/invoices/${f.open.id}`, status: 200, body: { currency: 'KWD', status: 'open' },
    check: async (r, f) => { f.open = await get(f.tenant, `/v1/invoices/${f.open.id}`); assert.deepEqual(r.body.data, f.open) },
  },
  { name: 'patch: status paid is not a PATCH move', method: 'PATCH', path: (f) => `/v1/invoices/${f.open.id}`, status: 409, code: 'conflict', body: { status: 'paid' }, check: (r) => assert.match(r.body.error.message, /\/pay/) },
  { name: 'patch: unknown status', method: 'PATCH', path: (f) => `/v1/invoices/${f.open.id}`, status: 422, body: { status: 'draft' }, check: (r) => assertDetail(r, 'status') },
  ...(['total', 'amountPaid', 'invoiceNumber', 'paidAt'] as const).map((field) => ({
    name: `patch: read-only ${field}`, method: 'PATCH', path: (f: F) => `/v1/invoices/${f.open.id}`, status: 422, body: { [field]: 0 },
    check: (r: any) => assertDetail(r, field, /read-only/),
  })),
  { name: "patch: another tenant's order", method: 'PATCH', path: (f) => `/v1/invoices/${f.open.id}`, status: 422, body: (f: F) => ({ orderId: f.otherOrderId }), check: (r) => assertDetail(r, 'orderId') },
  { name: "patch: another tenant's invoice", method: 'PATCH', path: (f) => `/v1/invoices/${f.otherInv.id}`, status: 404, body: { dueDate: null } },
  { name: 'patch: key without scope', method: 'PATCH', path: (f) => `/v1/invoices/${f.open.id}`, as: 'unscoped', status: 403, body: { dueDate: null } },
  { name: 'patch: total below what is paid', method: 'PATCH', path: (f) => `/v1/invoices/${f.partly.id}`, status: 422, body: { lines: [{ description: 'Tour', quantity: 1, unitPrice: 39.99 }] }, check: (r) => assertDetail(r, 'lines', /less than amountPaid 40/) },
  { name: 'patch: currency of an invoice with payments', method: 'PATCH', path: (f) => `/v1/invoices/${f.partly.id}`, status: 409, body: { currency: 'USD' } },
  { name: 'patch: void with payments on it', method: 'PATCH', path: (f) => `/v1/invoices/${f.partly.id}`, status: 409, body: { status: 'void' }, check: (r) => assert.match(r.body.error.message, /refund/) },
  {
    name: 'patch: total down to exactly what is paid settles it', method: 'PATCH', path: (f) => `/v1/invoices/${f.partly.id}`, status: 200, events: ['invoice.paid'],
    body: { lines: [{ description: 'Tour, shortened', quantity: 1, unitPrice: 40 }] },
    check: (r) => { assert.equal(r.body.data.status, 'paid'); assert.equal(r.body.data.amountPaid, 40); assert.equal(r.body.data.paidAt, r.body.data.updatedAt) },
  },
  { name: 'patch: void an open invoice; no event', method: 'PATCH', path: (f) => `/v1/invoices/${f.toVoid.id}`, status: 200, body: { status: 'void' }, check: (r) => assert.equal(r.body.data.status, 'void') },
  { name: 'patch: void again changes nothing', method: 'PATCH', path: (f) => `/v1/invoices/${f.toVoid.id}`, status: 200, body: { status: 'void' } },
  { name: 'patch: a void invoice is frozen', method: 'PATCH', path: (f) => `/v1/invoices/${f.toVoid.id}`, status: 409, body: { metadata: { late: 'yes' } } },

  // pay
  {
    name: 'pay: open → paid, the balance settled outside travelops', method: 'POST', path: (f) => `/v1/invoices/${f.toPay.id}/pay`, status: 200, events: ['invoice.paid'],
    check: (r, f) => {
      const d = r.body.data
      assert.deepEqual([d.status, d.amountPaid, d.total], ['paid', f.toPay.total, f.toPay.total])
      assert.equal(d.paidAt, d.updatedAt)
    },
  },
  { name: 'pay: twice', method: 'POST', path: (f) => `/v1/invoices/${f.toPay.id}/pay`, status: 409, code: 'conflict', check: (r) => assert.match(r.body.error.message, /already paid/) },
  { name: 'pay: a void invoice', method: 'POST', path: (f) => `/v1/invoices/${f.toVoid.id}/pay`, status: 409 },
  { name: 'pay: takes no fields', method: 'POST', path: (f) => `/v1/invoices/${f.open.id}/pay`, status: 422, body: { amount: 1 } },
  { name: "pay: another tenant's invoice", method: 'POST', path: (f) => `/v1/invoices/${f.otherInv.id}/pay`, status: 404 },
  { name: 'pay: malformed id', method: 'POST', path: '/v1/invoices/inv_x/pay', status: 404 },
  { name: 'pay: key without scope', method: 'POST', path: (f) => `/v1/invoices/${f.open.id}/pay`, as: 'unscoped', status: 403 },
  { name: 'pay: GET is not a method here', method: 'GET', path: (f) => `/v1/invoices/${f.open.id}/pay`, status: 405 },
  { name: 'patch: a paid invoice is frozen', method: 'PATCH', path: (f) => `/v1/invoices/${f.toPay.id}`, status: 409, body: { dueDate: '2030-01-01' }, check: (r) => assert.match(r.body.error.message, /paid/) },
  {
    name: "their invoice untouched by our attempts", method: 'GET', path: (f) => `/v1/invoices/${f.otherInv.id}`, as: 'other', status: 200,
    check: (r, f) => assert.deepEqual(r.body.data, f.otherInv),
  },
  { name: 'list: filter status=paid', method: 'GET', path: '/v1/invoices?status=paid', status: 200, check: (r, f) => assert.deepEqual(r.body.data.map((i: any) => i.id), [f.partly.id, f.toPay.id]) },
  { name: 'list: filter status=void', method: 'GET', path: '/v1/invoices?status=void', status: 200, check: (r, f) => assert.deepEqual(r.body.data.map((i: any) => i.id), [f.toVoid.id]) },

  // delete
  { name: 'delete: a paid invoice is kept', method: 'DELETE', path: (f) => `/v1/invoices/${f.toPay.id}`, status: 409 },
  { name: "delete: another tenant's invoice", method: 'DELETE', path: (f) => `/v1/invoices/${f.otherInv.id}`, status: 404 },
  { name: 'delete', method: 'DELETE', path: (f) => `/v1/invoices/${f.doomed.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body, { data: { id: f.doomed.id, deleted: true } }) },
  { name: 'delete: twice', method: 'DELETE', path: (f) => `/v1/invoices/${f.doomed.id}`, status: 404 },
  { name: 'delete: a void invoice', method: 'DELETE', path: (f) => `/v1/invoices/${f.toVoid.id}`, status: 200 },
])
