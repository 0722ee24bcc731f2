import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { EVENT_NAMES } from '../../src/events/catalog.ts'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { allEvents } from '../helpers/catalog.ts'
import { until } from '../helpers/cli.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

// What the dashboard needed from the API, usable by every client: POST /v1/webhooks/deliveries/replay
// (the CLI's `deliveries replay`) and GET /v1/webhooks/event-types (the event catalog).

describe('POST /v1/webhooks/deliveries/replay', () => {
  let app: TestApp
  let t: TestTenant
  let other: TestTenant
  let rx: Receiver
  let failing = true
  let webhook: string

  const deliveries = async () => (await t.request('GET', `/v1/webhooks/deliveries?webhook_id=${webhook}&limit=100`)).body.data as { id: string; status: string; attempts: number }[]

  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true, retryBaseMs: 3_600_000 })
    t = await app.tenant('Replay')
    other = await app.tenant('Other')
    rx = await startReceiver({ respond: () => ({ status: failing ? 500 : 200 }) })
    webhook = (await t.request('POST', '/v1/webhooks', { body: { url: rx.url, events: ['order.created'], secret: 'replay-secret-0123456' } })).body.data.id
    for (let i = 0; i < 3; i++) await t.request('POST', '/v1/orders', { body: orderBody() })
    await until('three failed first attempts', async () => (await deliveries()).filter((d) => d.status === 'failed').length === 3)
  })
  after(async () => {
    await app.close()
    await rx.close()
  })

  test('dry_run counts and changes nothing; then every failed delivery gets a new attempt', async () => {
    const dry = await t.request('POST', '/v1/webhooks/deliveries/replay', { body: { webhook_id: webhook, status: 'failed', dry_run: true } })
    assert.equal(dry.status, 200)
    assert.deepEqual(dry.body.data, { queued: 3, dry_run: true })
    await new Promise((r) => setTimeout(r, 300))
    assert.equal(rx.requests.length, 3, 'nothing was sent')
    failing = false
    const later = await t.request('POST', '/v1/webhooks/deliveries/replay', { body: { webhook_id: webhook, since: new Date(Date.now() + 60_000).toISOString() } })
    assert.deepEqual(later.body.data, { queued: 0, dry_run: false })
    const r = await t.request('POST', '/v1/webhooks/deliveries/replay', { body: { webhook_id: webhook, status: 'failed' } })
    assert.deepEqual(r.body.data, { queued: 3, dry_run: false })
    await rx.waitFor(6)
    await until('all delivered', async () => (await deliveries()).every((d) => d.status === 'delivered' && d.attempts === 2))
  })

  test('another tenant\'s subscription is unknown here (422); bad bodies are 422', async () => {
    const r = await other.request('POST', '/v1/webhooks/deliveries/replay', { body: { webhook_id: webhook } })
    assert.equal(r.status, 422)
    assert.equal(r.body.error.details[0].path, 'webhook_id')
    for (const body of [{}, { webhook_id: 'nope' }, { webhook_id: webhook, status: 'pending' }, { webhook_id: webhook, since: 'yesterday' }, { webhook_id: webhook, extra: 1 }]) {
      assert.equal((await t.request('POST', '/v1/webhooks/deliveries/replay', { body })).status, 422, JSON.stringify(body))
    }
  })
})

describe('GET /v1/webhooks/event-types', () => {
  let app: TestApp
  let t: TestTenant
  before(async () => {
    app = await startTestApp()
    t = await app.tenant()
  })
  after(() => app.close())

  test('every event in the contract\'s order, each with what sends it and an example body of the caller\'s tenant', async () => {
    const r = await t.request('GET', '/v1/webhooks/event-types')
    assert.equal(r.status, 200)
    const types = r.body.data as { name: string; description: string; emitted_by: string[]; example: { event: string; timestamp: string; tenant_id: string; data: { id: string } } }[]
    assert.deepEqual(types.map((e) => e.name), [...EVENT_NAMES])
    for (const e of types) {
      assert.ok(e.description.length > 10, e.name)
      // webhook.disabled comes from the delivery engine (endpoint health), after no request.
      if (e.name === 'webhook.disabled') assert.deepEqual(e.emitted_by, [], e.name)
      else assert.ok(e.emitted_by.length >= 1, `${e.name} is emitted by some route`)
      for (const route of e.emitted_by) assert.match(route, /^(POST|PATCH) \/v1\//)
      assert.equal(e.example.event, e.name)
      assert.equal(e.example.tenant_id, t.id)
      assert.match(e.example.data.id, /^[a-z]+_0{8}-/)
    }
    assert.ok(types.find((e) => e.name === 'order.created')!.emitted_by.includes('POST /v1/orders'))
    assert.equal(types.at(-1)!.name, 'webhook.disabled')
    const disabled = types.at(-1)!.example.data as unknown as { id: string; active: boolean; disabled_reason: string | null; disabled_at: string | null }
    assert.equal(disabled.active, false)
    assert.equal(disabled.disabled_reason, 'gone')
    assert.equal(disabled.disabled_at, types.at(-1)!.example.timestamp, 'disabled when the event happened')
    assert.match(disabled.id, /^wh_/)
    const narrow = await t.newKey({ scopes: ['orders:*'] })
    assert.equal((await app.request('GET', '/v1/webhooks/event-types', { key: narrow.key })).status, 403)
  })

  test('the descriptions say what the API does: order.updated goes with every status change, invoice.paid also follows a PATCH', async () => {
    /** The names of the events one request wrote to the outbox. */
    const emitted = async (method: string, path: string, body?: unknown) => {
      const seen = new Set((await allEvents(app)).map((e) => e.id))
      const r = await t.request(method, path, { body })
      assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`)
      return { data: r.body.data, events: (await allEvents(app)).filter((e) => !seen.has(e.id)).map((e) => e.name).sort() }
    }
    const order = async () => (await emitted('POST', '/v1/orders', orderBody())).data.id as string
    const a = await order()
    assert.deepEqual((await emitted('POST', `/v1/orders/${a}/confirm`)).events, ['order.confirmed', 'order.updated'])
    assert.deepEqual((await emitted('POST', `/v1/orders/${a}/cancel`)).events, ['order.cancelled', 'order.updated'])
    const b = await order()
    assert.deepEqual((await emitted('PATCH', `/v1/orders/${b}`, { status: 'confirmed' })).events, ['order.confirmed', 'order.updated'])
    assert.deepEqual((await emitted('PATCH', `/v1/orders/${b}`, { status: 'completed' })).events, ['order.updated'])
    assert.deepEqual((await emitted('PATCH', `/v1/orders/${b}`, { notes: 'late check-in' })).events, ['order.updated'])
    // An invoice paid in part, whose lines a PATCH brings down to what was paid, becomes paid.
    const invoice = (await emitted('POST', '/v1/invoices', { lines: [{ description: 'Tour', quantity: 1, unitPrice: 100 }], currency: 'EUR' })).data.id as string
    assert.deepEqual((await emitted('POST', '/v1/payments', { amount: 60, currency: 'EUR', method: 'card', invoiceId: invoice })).events, ['payment.received'])
    assert.deepEqual((await emitted('PATCH', `/v1/invoices/${invoice}`, { lines: [{ description: 'Tour, shortened', quantity: 1, unitPrice: 60 }] })).events, ['invoice.paid'])

    const said = Object.fromEntries(((await t.request('GET', '/v1/webhooks/event-types')).body.data as { name: string; description: string }[]).map((e) => [e.name, e.description]))
    assert.doesNotMatch(said['order.updated']!, /not its status/)
    for (const words of [/status/, /confirm/, /cancel/, /PATCH/]) assert.match(said['order.updated']!, words)
    for (const name of ['order.confirmed', 'order.cancelled']) assert.match(said[name]!, /PATCH/, `${name}: also by a PATCH of the status`)
    for (const words of [/pa(y|id)/, /payments?/, /PATCH/]) assert.match(said['invoice.paid']!, words)
  })
})
