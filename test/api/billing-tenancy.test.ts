import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { assertEvents, create, createOrder, EventLog, get, insertCustomer, invoiceBody, itineraryBody, paymentBody } from '../helpers/billing.ts'

/** Tenant B never reads, lists, changes or references tenant A's itineraries, invoices or payments. */
describe('billing tenant isolation', () => {
  let app: TestApp
  let a: TestTenant
  let b: TestTenant
  let log: EventLog
  const mine: Record<string, any> = {}
  let aOrder: string
  let aCustomer: string

  before(async () => {
    app = await startTestApp()
    a = await app.tenant('A')
    b = await app.tenant('B')
    log = new EventLog(app)
    aOrder = await createOrder(a)
    aCustomer = await insertCustomer(app, a.id)
    mine.itinerary = await create(a, '/v1/itineraries', itineraryBody({ orderId: aOrder }))
    mine.invoice = await create(a, '/v1/invoices', invoiceBody({ orderId: aOrder }))
    mine.payment = await create(a, '/v1/payments', paymentBody({ orderId: aOrder, invoiceId: mine.invoice.id, amount: 10 }))
    mine.invoice = await get(a, `/v1/invoices/${mine.invoice.id}`)
    await create(b, '/v1/itineraries', itineraryBody())
    await create(b, '/v1/invoices', invoiceBody())
    await create(b, '/v1/payments', paymentBody())
    await log.take()
  })
  after(() => app.close())

  const attempts: [string, string, (id: string) => string, unknown?][] = [
    ['itinerary', 'GET', (id) => `/v1/itineraries/${id}`],
    ['itinerary', 'PATCH', (id) => `/v1/itineraries/${id}`, { title: 'taken' }],
    ['itinerary', 'DELETE', (id) => `/v1/itineraries/${id}`],
    ['invoice', 'GET', (id) => `/v1/invoices/${id}`],
    ['invoice', 'PATCH', (id) => `/v1/invoices/${id}`, { status: 'void' }],
    ['invoice', 'DELETE', (id) => `/v1/invoices/${id}`],
    ['invoice', 'POST', (id) => `/v1/invoices/${id}/pay`],
    ['payment', 'GET', (id) => `/v1/payments/${id}`],
    ['payment', 'POST', (id) => `/v1/payments/${id}/refund`],
    ['payment', 'POST', (id) => `/v1/payments/${id}/refund`, { amount: 1 }],
  ]
  for (const [kind, method, path, body] of attempts) {
    test(`B gets 404 for ${method} on A's ${kind}${body ? ` with ${JSON.stringify(body)}` : ''}`, async () => {
      const r = await b.request(method, path(mine[kind].id), body === undefined ? {} : { body })
      assert.equal(r.status, 404, r.text)
      assert.equal(r.body.error.code, 'not_found')
      assert.equal(r.headers.get('x-tenant-id'), b.id)
    })
  }

  test("A's records are unchanged and no event was written by B's attempts", async () => {
    assert.deepEqual(await get(a, `/v1/itineraries/${mine.itinerary.id}`), mine.itinerary)
    assert.deepEqual(await get(a, `/v1/invoices/${mine.invoice.id}`), mine.invoice)
    assert.deepEqual(await get(a, `/v1/payments/${mine.payment.id}`), mine.payment)
    await assertEvents(log, a, [])
  })

  for (const [path, kind] of [['/v1/itineraries', 'itinerary'], ['/v1/invoices', 'invoice'], ['/v1/payments', 'payment']] as const) {
    test(`B's list of ${path} never holds A's records, with or without A's filters`, async () => {
      const filters = ['', `?orderId=${aOrder}`, ...(kind === 'payment' ? [`?invoiceId=${mine.invoice.id}`] : [])]
      for (const q of filters) {
        const r = await b.request('GET', `${path}${q}${q ? '&' : '?'}limit=100`)
        assert.equal(r.status, 200)
        assert.equal(r.body.data.length, q ? 0 : 1, `${path}${q}`)
        for (const rec of r.body.data) assert.notEqual(rec.id, mine[kind].id)
      }
      const own = await a.request('GET', `${path}?limit=100`)
      assert.deepEqual(own.body.data.map((x: any) => x.id), [mine[kind].id])
    })
  }

  const crossRefs: [string, string, Record<string, unknown>, string][] = [
    ['itinerary', '/v1/itineraries', itineraryBody(), 'orderId'],
    ['itinerary', '/v1/itineraries', itineraryBody(), 'customerId'],
    ['invoice', '/v1/invoices', invoiceBody(), 'orderId'],
    ['invoice', '/v1/invoices', invoiceBody(), 'customerId'],
    ['payment', '/v1/payments', paymentBody(), 'orderId'],
    ['payment', '/v1/payments', paymentBody(), 'invoiceId'],
  ]
  for (const [kind, path, body, field] of crossRefs) {
    test(`B cannot make a ${kind} with A's ${field}: 422 on '${field}'`, async () => {
      const id = { orderId: aOrder, customerId: aCustomer, invoiceId: mine.invoice.id }[field]
      const r = await b.request('POST', path, { body: { ...body, [field]: id } })
      assert.equal(r.status, 422, r.text)
      assert.deepEqual(r.body.error.details.map((d: any) => d.path), [field])
      await assertEvents(log, b, [])
    })
  }

  test("B cannot point its own records at A's by PATCH", async () => {
    const iti = await create(b, '/v1/itineraries', itineraryBody())
    const inv = await create(b, '/v1/invoices', invoiceBody())
    await log.take()
    for (const [path, field, id] of [
      [`/v1/itineraries/${iti.id}`, 'orderId', aOrder], [`/v1/itineraries/${iti.id}`, 'customerId', aCustomer],
      [`/v1/invoices/${inv.id}`, 'orderId', aOrder], [`/v1/invoices/${inv.id}`, 'customerId', aCustomer],
    ] as const) {
      const r = await b.request('PATCH', path, { body: { [field]: id } })
      assert.equal(r.status, 422, `${path} ${field}`)
      assert.deepEqual(r.body.error.details.map((d: any) => d.path), [field])
    }
    assert.deepEqual(await get(b, `/v1/itineraries/${iti.id}`), iti)
    assert.deepEqual(await get(b, `/v1/invoices/${inv.id}`), inv)
    await assertEvents(log, b, [])
  })
})
