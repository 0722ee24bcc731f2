import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { invoiceBody, itineraryBody, paymentBody } from '../helpers/billing.ts'
import { until } from '../helpers/cli.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'
import { EVENT_NAMES } from '../../src/events/catalog.ts'

const SECRET = 'every-event-secret-1234'

describe('each of the events reaches a receiver subscribed with "*"', () => {
  let app: TestApp
  let t: TestTenant
  let rx: Receiver
  let gone: Receiver
  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true, retryBaseMs: 20 })
    t = await app.tenant()
    rx = await startReceiver()
    gone = await startReceiver({ respond: [410] })
  })
  after(async () => {
    await app.close()
    await rx.close()
    await gone.close()
  })

  test('every event, signed, with data equal to what GET returns after the change', async () => {
    const ok = async (method: string, path: string, body?: unknown) => {
      const r = await t.request(method, path, body === undefined ? {} : { body })
      assert.ok(r.status < 300, `${method} ${path} → ${r.status} ${r.text}`)
      return r.body.data
    }
    assert.ok(await ok('POST', '/v1/webhooks', { url: rx.url, events: ['*'], secret: SECRET }))
    // Each step: the request, then the events it must emit and the path GET reads the record from.
    const expected: { event: string; get: string; snapshot?: unknown }[] = []
    const step = async (method: string, path: string, body: unknown, events: string[], get: (d: any) => string) => {
      const data = await ok(method, path, body)
      for (const event of events) expected.push({ event, get: get(data) })
      return data
    }
    const stepAndSnap = async (...args: Parameters<typeof step>) => {
      const data = await step(...args)
      await snapshot(args[3].length)
      return data
    }
    /** What GET returns right after the step: the events of that step carry exactly this. */
    const snapshot = async (n: number) => {
      for (const e of expected.slice(-n)) e.snapshot = await ok('GET', e.get)
    }
    const customer = await stepAndSnap('POST', '/v1/customers', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' }, ['customer.created'], (d) => `/v1/customers/${d.id}`)
    await stepAndSnap('PATCH', `/v1/customers/${customer.id}`, { phone: '+47 555 0100' }, ['customer.updated'], (d) => `/v1/customers/${d.id}`)
    const product = await stepAndSnap('POST', '/v1/products', { name: 'Fjord cruise', price: 149.5, currency: 'EUR' }, ['product.created'], (d) => `/v1/products/${d.id}`)
    await stepAndSnap('PATCH', `/v1/products/${product.id}`, { price: 159 }, ['product.updated'], (d) => `/v1/products/${d.id}`)
    await stepAndSnap('POST', '/v1/inquiries', { name: 'Bob', email: 'bob@example.com', message: 'Any space in June?', productId: product.id }, ['inquiry.created'], (d) => `/v1/inquiries/${d.id}`)
    const order = await stepAndSnap('POST', '/v1/orders', orderBody({ customerId: customer.id }), ['order.created'], (d) => `/v1/orders/${d.id}`)
    await stepAndSnap('PATCH', `/v1/orders/${order.id}`, { notes: 'vegetarian' }, ['order.updated'], (d) => `/v1/orders/${d.id}`)
    await stepAndSnap('POST', `/v1/orders/${order.id}/confirm`, undefined, ['order.confirmed', 'order.updated'], (d) => `/v1/orders/${d.id}`)
    // A subscription whose receiver answers 410 to the itinerary: endpoint health disables it, and "*" gets webhook.disabled.
    const disabled = await ok('POST', '/v1/webhooks', { url: gone.url, events: ['itinerary.created'], secret: SECRET })
    await stepAndSnap('POST', '/v1/itineraries', itineraryBody({ orderId: order.id }), ['itinerary.created'], (d) => `/v1/itineraries/${d.id}`)
    await until('the 410 subscription disabled', async () => (await ok('GET', `/v1/webhooks/${disabled.id}`)).active === false)
    expected.push({ event: 'webhook.disabled', get: `/v1/webhooks/${disabled.id}` })
    await snapshot(1)
    const invoice = await stepAndSnap('POST', '/v1/invoices', invoiceBody({ orderId: order.id }), ['invoice.created'], (d) => `/v1/invoices/${d.id}`)
    const payment = await step('POST', '/v1/payments', paymentBody({ amount: 299, invoiceId: invoice.id }), ['payment.received', 'invoice.paid'],
      (d) => `/v1/payments/${d.id}`)
    expected[expected.length - 1]!.get = `/v1/invoices/${invoice.id}`
    await snapshot(2)
    await stepAndSnap('POST', `/v1/payments/${payment.id}/refund`, { amount: 10 }, ['payment.refunded'], (d) => `/v1/payments/${d.id}`)
    const other = await stepAndSnap('POST', '/v1/orders', orderBody(), ['order.created'], (d) => `/v1/orders/${d.id}`)
    await stepAndSnap('POST', `/v1/orders/${other.id}/cancel`, undefined, ['order.cancelled', 'order.updated'], (d) => `/v1/orders/${d.id}`)

    const got = await rx.waitFor(expected.length, 10_000)
    const bodies = got.map((r) => {
      assert.equal(r.headers['x-webhook-signature'], createHmac('sha256', SECRET).update(r.body).digest('hex'))
      return JSON.parse(r.body)
    })
    assert.deepEqual(new Set(bodies.map((b) => b.event)), new Set(EVENT_NAMES), `all ${EVENT_NAMES.length} event names arrived`)
    assert.equal(bodies.length, expected.length, 'nothing extra')
    assert.deepEqual(bodies.map((b) => b.event).sort(), expected.map((e) => e.event).sort(), 'exactly the expected events')
    for (const b of bodies) {
      assert.equal(b.tenant_id, t.id)
      assert.match(b.id, /^evt_/)
    }
    // In order of emission, each event's data is what GET returned right after its step.
    const sorted = [...bodies].sort((x, y) => (x.id < y.id ? -1 : 1))
    for (const e of expected) {
      const i = sorted.findIndex((b) => b.event === e.event && b.data.id === (e.snapshot as { id: string }).id)
      assert.ok(i >= 0, `${e.event} for ${e.get}`)
      assert.deepEqual(sorted[i].data, e.snapshot, `${e.event} carries the record as GET shows it`)
      sorted.splice(i, 1)
    }
  })
})
