import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'
import { newId } from '../../src/lib/ids.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('SSRF guard without --allow-private-targets', () => {
  let app: TestApp
  let t: TestTenant
  let rx: Receiver
  before(async () => {
    app = await startTestApp({ retryBaseMs: 60_000, deliveryTimeoutMs: 1000 })
    t = await app.tenant()
    rx = await startReceiver()
  })
  after(async () => {
    await app.close()
    await rx.close()
  })

  test('loopback, private, link-local and unspecified targets are refused at create and update', async () => {
    for (const url of ['http://127.0.0.1:9/x', 'http://localhost/x', 'http://[::1]/', 'http://10.1.2.3/', 'http://192.168.0.10/', 'http://169.254.169.254/latest', 'http://0.0.0.0/', 'http://[fd00::1]/', rx.url]) {
      const r = await t.request('POST', '/v1/webhooks', { body: { url, events: ['*'], secret: 'x'.repeat(16) } })
      assert.equal(r.status, 422, url)
      assert.equal(r.body.error.details[0].path, 'url')
      assert.match(r.body.error.details[0].message, /allow-private-targets/)
    }
    const ok = await t.request('POST', '/v1/webhooks', { body: { url: 'https://hooks.example.invalid/travelops', events: ['*'], secret: 'x'.repeat(16) } })
    assert.equal(ok.status, 201, 'a name that does not resolve yet is accepted')
    const patched = await t.request('PATCH', `/v1/webhooks/${ok.body.data.id}`, { body: { url: 'http://127.0.0.1/' } })
    assert.equal(patched.status, 422)
    await t.request('DELETE', `/v1/webhooks/${ok.body.data.id}`)
  })

  test('a target that is loopback at send time fails the attempt with an error and the receiver sees nothing', async () => {
    // A subscription stored before the rule applied (or whose name later resolved inside): written directly.
    const now = new Date().toISOString()
    const id = newId('wh')
    await app.server.deps.db.insertInto('webhooks').values({
      id, tenant_id: t.id, url: `${rx.url}/inside`, events: '["*"]', secret: 'x'.repeat(16), headers: '{}',
      active: 1, retry_count: 3, created_at: now, updated_at: now, deleted_at: null,
    }).execute()
    await t.request('POST', '/v1/orders', { body: orderBody() })
    let d: any
    for (let i = 0; i < 100 && !(d?.attempts >= 1); i++) {
      await sleep(50)
      d = (await t.request('GET', `/v1/webhooks/deliveries?webhook_id=${id}`)).body.data[0]
    }
    assert.equal(d.status, 'failed')
    assert.equal(d.response_code, null)
    assert.ok(d.next_retry_at, 'retried later like any failure')
    const log = (await t.request('GET', `/v1/webhooks/deliveries/${d.id}`)).body.data.attempt_log
    assert.match(log[0].error, /127\.0\.0\.1 is not allowed/)
    assert.equal(rx.requests.length, 0)
  })

  test('a host name that resolves to loopback at send time is refused too (the name is resolved, then filtered)', async () => {
    const now = new Date().toISOString()
    const id = newId('wh')
    const port = new URL(rx.url).port
    await app.server.deps.db.insertInto('webhooks').values({
      id, tenant_id: t.id, url: `http://localhost:${port}/by-name`, events: '["order.created"]', secret: 'x'.repeat(16), headers: '{}',
      active: 1, retry_count: 3, created_at: now, updated_at: now, deleted_at: null,
    }).execute()
    await t.request('POST', '/v1/orders', { body: orderBody() })
    let d: any
    for (let i = 0; i < 100 && !(d?.attempts >= 1); i++) {
      await sleep(50)
      d = (await t.request('GET', `/v1/webhooks/deliveries?webhook_id=${id}`)).body.data[0]
    }
    const log = (await t.request('GET', `/v1/webhooks/deliveries/${d.id}`)).body.data.attempt_log
    assert.match(log[0].error, /127\.0\.0\.1 is not allowed/)
    assert.equal(rx.requests.length, 0)
  })
})
