import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { until } from '../helpers/cli.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

// CONTRACT §15: each item of GET /v1/events is the envelope exactly as a delivery's body carries
// it. Real receivers on 127.0.0.1 get the bodies; the API's item and GET /v1/events/:id must be
// those bytes — an ordinary event, one whose record is rendered straight from its row (an order:
// lib/rendered.ts), and a test event with "test": true.

describe('the events API shows the bodies receivers got, byte for byte', () => {
  let app: TestApp
  let t: TestTenant
  let rx: Receiver

  /** The JSON text of each item of a list answer, as sent (the list's `data` elements are the payloads joined by commas). */
  const items = (text: string, ids: string[]): Map<string, string> => {
    const out = new Map<string, string>()
    for (const id of ids) {
      const start = text.indexOf(`{"id":"${id}"`)
      assert.ok(start > 0, id)
      // The envelope's last key is data (or test after it); its end is where the next item or the array starts.
      const end = [text.indexOf(',{"id":"evt_', start + 1), text.indexOf('],"has_more":', start)].filter((i) => i > 0).sort((x, y) => x - y)[0]!
      out.set(id, text.slice(start, end))
    }
    return out
  }

  before(async () => {
    rx = await startReceiver()
    app = await startTestApp({ allowPrivateTargets: true })
    t = await app.tenant()
  })
  after(async () => {
    await app.close()
    await rx.close()
  })

  test('orders, customers, a confirm and a test event: each body received equals the list item and the single event', async () => {
    const created = await t.request('POST', '/v1/webhooks', { body: { url: `${rx.url}/hook`, events: ['*'], secret: 'whsec_0123456789abcdef' } })
    assert.equal(created.status, 201, created.text)
    const order = (await t.request('POST', '/v1/orders', { body: orderBody({ notes: 'ünïcödé ✈ "quoted" \\ back\u2028slash', metadata: { 'k\\"ey': 'v' } }) })).body.data
    await t.request('POST', `/v1/orders/${order.id}/confirm`)
    await t.request('POST', '/v1/customers', { body: { firstName: 'Zoë', lastName: 'Ødegård', email: 'zoe@example.com' } })
    assert.equal((await t.request('POST', `/v1/webhooks/${created.body.data.id}/test`, { body: { event: 'payment.received' } })).status, 202)
    const received = await rx.waitFor(5)
    const bodies = new Map(received.map((r) => [String(r.headers['x-webhook-id']), r.body]))
    assert.equal(bodies.size, 5)

    const list = await t.request('GET', '/v1/events?limit=100')
    assert.equal(list.status, 200)
    const listed = items(list.text, [...bodies.keys()])
    for (const [id, body] of bodies) {
      assert.equal(listed.get(id), body, `${id}: the list item is the body received`)
      const one = await t.request('GET', `/v1/events/${id}`)
      assert.equal(one.text, `{"data":${body}}`, `${id}: GET /v1/events/:id is the body received`)
    }
    const test = JSON.parse([...bodies.values()].find((b) => b.includes('"test":true'))!)
    assert.equal(test.event, 'payment.received')
    assert.deepEqual(Object.keys(test), ['id', 'event', 'timestamp', 'tenant_id', 'data', 'test'])
    assert.equal(list.body.data.find((e: { id: string }) => e.id === test.id).test, true)
    // And each is the delivery record's payload (the webhooks' view of the same stored text).
    await until('every delivery delivered', async () => {
      const ds = (await t.request('GET', '/v1/webhooks/deliveries?limit=100')).body.data as { status: string }[]
      return ds.length === 5 && ds.every((d) => d.status === 'delivered')
    })
    const deliveries = (await t.request('GET', '/v1/webhooks/deliveries?limit=100')).body.data as { event_id: string; payload: unknown }[]
    for (const d of deliveries) assert.equal(JSON.stringify(d.payload), bodies.get(d.event_id))
  })
})
