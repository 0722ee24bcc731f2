import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

// Lists render their records straight from the rows (each module's `…Json(row)`), single-record
// reads map the row to an object and serialise it. On either engine, a record must read the same
// in both, byte for byte: whatever the columns hold and however the driver returns them.

const TRICKY = 'a "quoted", \\ line\u2028 € 𝄞 </script>'
const METADATA = { b: TRICKY, a: 'ü', 10: 'ten', 9: 'nine', 'x\\': 'slash', 'x\u00e9': 'accent', 'x"': 'quote' }
const ADDRESS = { line1: TRICKY, city: 'Oslo', region: null, postalCode: '0150', country: 'NO' }

/** The text of `data` in a single-record answer (`{"data":…}`). */
const dataText = (text: string) => text.slice('{"data":'.length, -1)
/** The records' texts of a list answer, split where one record ends and the next begins (each is an object). */
const recordTexts = (text: string, ids: string[]): string[] => {
  const body = text.slice('{"data":['.length, text.lastIndexOf('],"has_more"'))
  const starts = ids.map((id) => body.indexOf(`{"id":${JSON.stringify(id)}`))
  assert.ok(starts.every((s, i) => s >= 0 && (i === 0 || s > starts[i - 1]!)), 'every record found, in order')
  return starts.map((s, i) => body.slice(s, i + 1 < starts.length ? starts[i + 1]! - 1 : body.length))
}

describe('lists render each record as its single-record read answers it, byte for byte', () => {
  let app: TestApp
  let t: TestTenant
  let rx: Receiver

  before(async () => {
    rx = await startReceiver()
    app = await startTestApp({ allowPrivateTargets: true })
    t = await app.tenant('Lists')
    const webhook = await t.request('POST', '/v1/webhooks', { body: { url: rx.url, events: ['*'], secret: 'whsec_0123456789abcdef' } })
    assert.equal(webhook.status, 201, webhook.text)
  })
  after(async () => {
    await app.close()
    await rx.close()
  })

  test('customers, suppliers, products, inquiries, payments, itineraries, invoices, webhooks and keys', async () => {
    const post = async (path: string, body: unknown) => {
      const r = await t.request('POST', path, { body })
      assert.equal(r.status, 201, `${path}: ${r.text}`)
      return r.body.data.id as string
    }
    const customer = await post('/v1/customers', { firstName: TRICKY, lastName: 'L', email: 'x@example.com', phone: '+47 22 00 00 00', address: ADDRESS, notes: TRICKY, metadata: METADATA })
    await post('/v1/customers', { firstName: 'Plain', lastName: 'Customer', email: 'plain@example.com' })
    await post('/v1/suppliers', { name: TRICKY, type: 'hotel', email: 's@example.com', address: ADDRESS, notes: TRICKY, metadata: METADATA })
    await post('/v1/suppliers', { name: 'Plain', type: 'guide' })
    const product = await post('/v1/products', { name: TRICKY, description: TRICKY, price: 149.5, currency: 'EUR', durationMinutes: 90, location: TRICKY, capacity: 12, metadata: METADATA })
    await post('/v1/products', { name: 'Plain', price: 1000, currency: 'JPY', active: false })
    await post('/v1/inquiries', { name: TRICKY, email: 'i@example.com', message: TRICKY, productId: product, travelDate: '2027-06-01', travelers: 3, metadata: METADATA })
    await post('/v1/inquiries', { name: 'Plain', email: 'p@example.com', message: 'm' })
    const invoice = await post('/v1/invoices', { customerId: customer, currency: 'KWD', lines: [{ description: TRICKY, quantity: 7, unitPrice: 1.001 }, { description: 'b', quantity: 1, unitPrice: 0.1 }],
      dueDate: '2027-01-31', metadata: METADATA })
    await post('/v1/invoices', { currency: 'EUR', lines: [{ description: 'a', quantity: 3, unitPrice: 0.1 }] })
    await post('/v1/payments', { amount: 1.5, currency: 'KWD', method: 'card', invoiceId: invoice, reference: TRICKY, metadata: METADATA })
    await post('/v1/payments', { amount: 0.3, currency: 'EUR', method: 'cash' })
    await post('/v1/itineraries', { title: TRICKY, customerId: customer, startDate: '2027-06-01', endDate: '2027-06-03',
      days: [{ day: 1, title: TRICKY, description: TRICKY, items: [TRICKY, '08:00 pick-up'] }, { day: 3, date: '2027-06-03', title: 'Home' }], metadata: METADATA })
    await post('/v1/itineraries', { title: 'Plain', startDate: '2027-06-01', endDate: '2027-06-01' })
    await post('/v1/webhooks', { url: `${rx.url}/orders?q="x"`, events: ['order.created', 'order.cancelled'], secret: 'whsec_0123456789abcdef',
      headers: { 'X-Team': TRICKY.replace(/[^ -~]/g, ''), Authorization: 'Bearer never-shown' } })
    await post('/v1/keys', { name: TRICKY, scopes: ['orders:read', 'customers:write'], rate_limit: 500, expires_in: '30d' })

    for (const resource of ['customers', 'suppliers', 'products', 'inquiries', 'payments', 'itineraries', 'invoices', 'webhooks', 'keys']) {
      const list = await t.request('GET', `/v1/${resource}?limit=100`)
      assert.equal(list.status, 200, list.text)
      const ids = list.body.data.map((r: { id: string }) => r.id) as string[]
      assert.ok(ids.length >= 2, resource)
      const texts = recordTexts(list.text, ids)
      for (const [i, id] of ids.entries()) {
        const one = await t.request('GET', `/v1/${resource}/${id}`)
        assert.equal(one.status, 200, one.text)
        assert.equal(texts[i], dataText(one.text), `${resource} ${id}`)
      }
    }
  })

  test('webhook deliveries: each record is the single-record view without its attempt log, the payload as every attempt sent it', async () => {
    // Every event of the test above delivered (12: suppliers have none), so no record changes between the reads.
    await rx.waitFor(12, 10_000)
    let list
    for (const deadline = Date.now() + 10_000; ;) {
      list = await t.request('GET', '/v1/webhooks/deliveries?limit=100')
      assert.equal(list.status, 200, list.text)
      if (list.body.data.length === 12 && list.body.data.every((d: { status: string }) => d.status === 'delivered')) break
      assert.ok(Date.now() < deadline, `not all delivered: ${list.text.slice(0, 500)}`)
      await new Promise((r) => setTimeout(r, 50))
    }
    const ids = list.body.data.map((r: { id: string }) => r.id) as string[]
    const texts = recordTexts(list.text, ids)
    const sent = new Set(rx.requests.map((r) => r.body))
    for (const [i, id] of ids.entries()) {
      const one = await t.request('GET', `/v1/webhooks/deliveries/${id}`)
      assert.equal(one.status, 200, one.text)
      const detail = dataText(one.text)
      assert.equal(texts[i], `${detail.slice(0, detail.lastIndexOf(',"attempt_log":'))}}`, id)
      const payload = texts[i]!.slice(texts[i]!.indexOf(',"payload":') + ',"payload":'.length, -1)
      assert.ok(sent.has(payload), `${id}: the payload is the body its attempt sent`)
    }
  })
})
