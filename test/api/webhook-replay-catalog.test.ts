import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { EVENT_NAMES } from '../../src/events/catalog.ts'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
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
  let hook: string

  const deliveries = async () => (await t.request('GET', `/v1/webhooks/deliveries?webhook_id=${hook}&limit=100`)).body.data as { id: string; status: string; attempts: number }[]

  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true, retryBaseMs: 3_600_000 })
    t = await app.tenant('Replay')
    other = await app.tenant('Other')
    rx = await startReceiver({ respond: () => ({ status: failing ? 500 : 200 }) })
    hook = (await t.request('POST', '/v1/webhooks', { body: { url: rx.url, events: ['order.created'], secret: 'replay-secret-0123456' } })).body.data.id
    for (let i = 0; i < 3; i++) await t.request('POST', '/v1/orders', { body: orderBody() })
    await until('three failed first attempts', async () => (await deliveries()).filter((d) => d.status === 'failed').length === 3)
  })
  after(async () => {
    await app.close()
    await rx.close()
  })

  test('dry_run counts and changes nothing; then every failed delivery gets a new attempt', async () => {
    const dry = await t.request('POST', '/v1/webhooks/deliveries/replay', { body: { webhook_id: hook, status: 'failed', dry_run: true } })
    assert.equal(dry.status, 200)
    assert.deepEqual(dry.body.data, { queued: 3, dry_run: true })
    await new Promise((r) => setTimeout(r, 300))
    assert.equal(rx.requests.length, 3, 'nothing was sent')
    failing = false
    const later = await t.request('POST', '/v1/webhooks/deliveries/replay', { body: { webhook_id: hook, since: new Date(Date.now() + 60_000).toISOString() } })
    assert.deepEqual(later.body.data, { queued: 0, dry_run: false })
    const r = await t.request('POST', '/v1/webhooks/deliveries/replay', { body: { webhook_id: hook, status: 'failed' } })
    assert.deepEqual(r.body.data, { queued: 3, dry_run: false })
    await rx.waitFor(6)
    await until('all delivered', async () => (await deliveries()).every((d) => d.status === 'delivered' && d.attempts === 2))
  })

  test('another tenant\'s subscription is unknown here (422); bad bodies are 422', async () => {
    const r = await other.request('POST', '/v1/webhooks/deliveries/replay', { body: { webhook_id: hook } })
    assert.equal(r.status, 422)
    assert.equal(r.body.error.details[0].path, 'webhook_id')
    for (const body of [{}, { webhook_id: 'nope' }, { webhook_id: hook, status: 'pending' }, { webhook_id: hook, since: 'yesterday' }, { webhook_id: hook, extra: 1 }]) {
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

  test('the 14 events in the contract\'s order, each with what sends it and an example body of the caller\'s tenant', async () => {
    const r = await t.request('GET', '/v1/webhooks/event-types')
    assert.equal(r.status, 200)
    const types = r.body.data as { name: string; description: string; emitted_by: string[]; example: { event: string; tenant_id: string; data: { id: string } } }[]
    assert.deepEqual(types.map((e) => e.name), [...EVENT_NAMES])
    for (const e of types) {
      assert.ok(e.description.length > 10, e.name)
      assert.ok(e.emitted_by.length >= 1, `${e.name} is emitted by some route`)
      for (const route of e.emitted_by) assert.match(route, /^(POST|PATCH) \/v1\//)
      assert.equal(e.example.event, e.name)
      assert.equal(e.example.tenant_id, t.id)
      assert.match(e.example.data.id, /^[a-z]+_0{8}-/)
    }
    assert.ok(types.find((e) => e.name === 'order.created')!.emitted_by.includes('POST /v1/orders'))
    const narrow = await t.newKey({ scopes: ['orders:*'] })
    assert.equal((await app.request('GET', '/v1/webhooks/event-types', { key: narrow.key })).status, 403)
  })
})
