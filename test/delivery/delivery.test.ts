import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'
import { withTx } from '../../src/engine/tx.ts'
import { emit } from '../../src/events/emit.ts'

const SECRET = 'whsec_0123456789abcdef'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls a delivery until `done` holds (the worker is asynchronous), at most ~10 s. */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await read()
    if (done(v)) return v
    await sleep(50)
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('webhook delivery to real receivers', () => {
  let app: TestApp
  let t: TestTenant
  const receivers: Receiver[] = []
  const receiver = async (respond?: Parameters<typeof startReceiver>[0]) => {
    const rx = await startReceiver(respond)
    receivers.push(rx)
    return rx
  }
  const addWebhook = async (tenant: TestTenant, url: string, events: string[] = ['*'], extra = {}) => {
    const r = await tenant.request('POST', '/v1/webhooks', { body: { url, events, secret: SECRET, ...extra } })
    assert.equal(r.status, 201, r.text)
    return r.body.data.id as string
  }
  const deliveriesOf = async (tenant: TestTenant, webhookId: string) =>
    (await tenant.request('GET', `/v1/webhooks/deliveries?webhook_id=${webhookId}&limit=100`)).body.data as any[]

  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true, retryBaseMs: 20, deliveryTimeoutMs: 400 })
    t = await app.tenant()
  })
  after(async () => {
    await app.close()
    await Promise.all(receivers.map((r) => r.close()))
  })

  test('a stored subscription holding headers refused since is sent without them, the rest as stored', async () => {
    const rx = await receiver()
    const wh = await addWebhook(t, `${rx.url}/stored-headers`, ['customer.created'], { headers: { 'X-Partner': 'acme', Authorization: 'Bearer rx-token' } })
    // Written before §16 refused these names (or by hand): the API would now answer 422 for each.
    const stored = { 'X-Partner': 'acme', Authorization: 'Bearer rx-token', Cookie: 'a=1', 'Content-Encoding': 'gzip', 'X-Forwarded-For': '10.0.0.1', Host: 'elsewhere.example', Forwarded: 'for=1.2.3.4' }
    await app.server.deps.db.updateTable('webhooks').set({ headers: JSON.stringify(stored) } as never).where('id', '=', wh).execute()
    await t.request('POST', '/v1/customers', { body: { firstName: 'Stored', lastName: 'Headers', email: 'stored@example.com' } })
    const [got] = await rx.waitFor(1)
    assert.equal(got!.headers['x-partner'], 'acme')
    assert.equal(got!.headers.authorization, 'Bearer rx-token')
    for (const name of ['cookie', 'content-encoding', 'x-forwarded-for', 'forwarded']) assert.equal(got!.headers[name], undefined, name)
    assert.equal(got!.headers.host, new URL(rx.url).host)
    JSON.parse(got!.body)
    const [d] = await until(() => deliveriesOf(t, wh), (ds) => ds[0]?.status === 'delivered', 'delivered')
    assert.equal(d.status, 'delivered')
  })

  test('an order event arrives signed, with every header, and the body equals the stored payload', async () => {
    const rx = await receiver()
    const wh = await addWebhook(t, `${rx.url}/hooks/travelops`, ['order.created'], { headers: { 'X-Partner': 'acme' } })
    const order = (await t.request('POST', '/v1/orders', { body: orderBody() })).body.data
    const [got] = await rx.waitFor(1)
    assert.equal(got!.method, 'POST')
    assert.equal(got!.url, '/hooks/travelops')
    assert.equal(got!.headers['content-type'], 'application/json')
    assert.match(String(got!.headers['user-agent']), /^travelops\/\d+\.\d+\.\d+$/)
    assert.equal(got!.headers['x-partner'], 'acme')
    assert.equal(got!.headers['x-webhook-signature'], createHmac('sha256', SECRET).update(got!.body).digest('hex'))
    const body = JSON.parse(got!.body)
    assert.equal(got!.headers['x-webhook-id'], body.id)
    assert.equal(got!.headers['x-webhook-timestamp'], body.timestamp)
    assert.match(body.id, /^evt_/)
    assert.equal(body.event, 'order.created')
    assert.equal(body.tenant_id, t.id)
    assert.deepEqual(body.data, order)
    const [d] = await until(() => deliveriesOf(t, wh), (ds) => ds[0]?.status === 'delivered', 'delivered')
    assert.equal(d.event, 'order.created')
    assert.equal(d.event_id, body.id)
    assert.equal(d.response_code, 200)
    assert.equal(d.attempts, 1)
    assert.ok(d.delivered_at)
    assert.equal(d.next_retry_at, null)
    assert.equal(JSON.stringify(d.payload), got!.body, 'the body sent is the stored payload')
    const full = (await t.request('GET', `/v1/webhooks/deliveries/${d.id}`)).body.data
    assert.equal(full.attempt_log.length, 1)
    assert.equal(full.attempt_log[0].response_code, 200)
    assert.equal(typeof full.attempt_log[0].duration_ms, 'number')
  })

  test('with --allow-private-targets a host name is resolved and delivered to', async () => {
    const rx = await receiver()
    await addWebhook(t, `http://localhost:${new URL(rx.url).port}/named`, ['order.created'])
    await t.request('POST', '/v1/orders', { body: orderBody() })
    const [got] = await rx.waitFor(1)
    assert.equal(got!.url, '/named')
  })

  test('a subscription gets only its events; an inactive one gets nothing; another tenant\'s gets nothing', async () => {
    const onlyConfirm = await receiver()
    const inactive = await receiver()
    const foreign = await receiver()
    const whConfirm = await addWebhook(t, onlyConfirm.url, ['order.confirmed'])
    const whInactive = await addWebhook(t, inactive.url, ['*'])
    assert.equal((await t.request('PATCH', `/v1/webhooks/${whInactive}`, { body: { active: false } })).body.data.active, false)
    const other = await app.tenant('Other')
    await addWebhook(other, foreign.url, ['*'])
    const id = (await t.request('POST', '/v1/orders', { body: orderBody() })).body.data.id
    await t.request('POST', `/v1/orders/${id}/confirm`)
    const [got] = await onlyConfirm.waitFor(1)
    assert.equal(JSON.parse(got!.body).event, 'order.confirmed')
    await sleep(300)
    assert.equal(onlyConfirm.requests.length, 1, 'not order.created nor order.updated')
    assert.equal(inactive.requests.length, 0)
    assert.equal(foreign.requests.length, 0)
    assert.equal((await deliveriesOf(t, whInactive)).length, 0)
    assert.equal((await deliveriesOf(t, whConfirm)).length, 1)
    // B sees neither A's subscriptions nor A's deliveries.
    assert.equal((await other.request('GET', `/v1/webhooks/${whConfirm}`)).status, 404)
    const aDelivery = (await deliveriesOf(t, whConfirm))[0].id
    assert.equal((await other.request('GET', `/v1/webhooks/deliveries/${aDelivery}`)).status, 404)
    assert.equal((await other.request('POST', `/v1/webhooks/deliveries/${aDelivery}/retry`)).status, 404)
    const theirs = (await other.request('GET', '/v1/webhooks/deliveries?limit=100')).body.data
    assert.ok(theirs.every((d: { webhook_id: string }) => d.webhook_id !== whConfirm))
    const webhooks = (await other.request('GET', '/v1/webhooks')).body.data
    assert.ok(webhooks.every((h: { id: string }) => h.id !== whConfirm && h.id !== whInactive))
  })

  test('a receiver failing twice then answering 200: one record, delivered, 3 attempts, same X-Webhook-ID', async () => {
    const rx = await receiver({ respond: [500, 503, 200] })
    const wh = await addWebhook(t, rx.url, ['order.created'])
    await t.request('POST', '/v1/orders', { body: orderBody() })
    const reqs = await rx.waitFor(3)
    assert.equal(new Set(reqs.map((r) => r.headers['x-webhook-id'])).size, 1)
    assert.equal(new Set(reqs.map((r) => r.body)).size, 1, 'the same bytes each time')
    const ds = await until(() => deliveriesOf(t, wh), (d) => d[0]?.status === 'delivered', 'delivered')
    assert.equal(ds.length, 1)
    assert.equal(ds[0].attempts, 3)
    assert.equal(ds[0].response_code, 200)
    const log = (await t.request('GET', `/v1/webhooks/deliveries/${ds[0].id}`)).body.data.attempt_log
    assert.deepEqual(log.map((a: { response_code: number }) => a.response_code), [500, 503, 200])
  })

  test('a receiver always failing: exactly 4 attempts, then failed with no next_retry_at', async () => {
    const rx = await receiver({ respond: [500] })
    const wh = await addWebhook(t, rx.url, ['order.created'])
    await t.request('POST', '/v1/orders', { body: orderBody() })
    const queued = await until(() => deliveriesOf(t, wh), (d) => d[0]?.status === 'failed' && d[0]?.next_retry_at !== null, 'first failure')
    assert.ok(Date.parse(queued[0].next_retry_at) > Date.parse(queued[0].last_attempt_at))
    await rx.waitFor(4, 8000)
    const ds = await until(() => deliveriesOf(t, wh), (d) => d[0]?.attempts === 4 && d[0]?.next_retry_at === null, 'final failure')
    assert.equal(ds[0].status, 'failed')
    assert.equal(ds[0].response_code, 500)
    await sleep(500)
    assert.equal(rx.requests.length, 4, 'no fifth attempt')
  })

  test('a receiver hanging past the deadline: failed, response_code null, the error says timeout', async () => {
    const rx = await receiver({ respond: () => ({ hang: true }) })
    const wh = await addWebhook(t, rx.url, ['order.created'])
    await t.request('POST', '/v1/orders', { body: orderBody() })
    const [d] = await until(() => deliveriesOf(t, wh), (x) => x[0]?.status === 'failed', 'timeout')
    assert.equal(d.response_code, null)
    const log = (await t.request('GET', `/v1/webhooks/deliveries/${d.id}`)).body.data.attempt_log
    assert.match(log[0].error, /timeout/)
    assert.ok(log[0].duration_ms >= 350)
  })

  test('a manual retry makes a new attempt without restarting the automatic schedule', async () => {
    const rx = await receiver({ respond: [200] })
    const wh = await addWebhook(t, rx.url, ['order.created'])
    await t.request('POST', '/v1/orders', { body: orderBody() })
    const [d] = await until(() => deliveriesOf(t, wh), (x) => x[0]?.status === 'delivered', 'delivered')
    const r = await t.request('POST', `/v1/webhooks/deliveries/${d.id}/retry`)
    assert.equal(r.status, 200)
    assert.equal(r.body.data.id, d.id)
    await rx.waitFor(2)
    const full = await until(async () => (await t.request('GET', `/v1/webhooks/deliveries/${d.id}`)).body.data, (x) => x.attempts === 2, 'second attempt')
    assert.deepEqual(full.attempt_log.map((a: { trigger: string }) => a.trigger), ['auto', 'manual'])
    assert.equal(full.status, 'delivered')
    assert.equal(full.next_retry_at, null)
  })

  test('a manual retry asked for while an attempt is in flight is not lost', async () => {
    const rx = await receiver({ respond: (_req, n) => ({ status: 200, delayMs: n === 1 ? 600 : 0 }) })
    const wh = await addWebhook(t, rx.url, ['order.created'])
    await t.request('POST', '/v1/orders', { body: orderBody() })
    const [d] = await until(() => deliveriesOf(t, wh), (x) => x[0]?.status === 'delivered', 'delivered')
    assert.equal((await t.request('POST', `/v1/webhooks/deliveries/${d.id}/retry`)).status, 200)
    await rx.waitFor(2) // the second attempt is now waiting 600 ms for its answer
    assert.equal((await t.request('POST', `/v1/webhooks/deliveries/${d.id}/retry`)).status, 200)
    await rx.waitFor(3)
    const full = await until(async () => (await t.request('GET', `/v1/webhooks/deliveries/${d.id}`)).body.data, (x) => x.attempts === 3, 'third attempt')
    assert.deepEqual(full.attempt_log.map((a: { trigger: string }) => a.trigger), ['auto', 'manual', 'manual'])
  })

  test('a rolled-back change produces no event and no delivery', async () => {
    const rx = await receiver()
    await addWebhook(t, rx.url, ['*'])
    const { deps } = app.server
    const before = (await deps.db.selectFrom('deliveries').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n
    const ctx = { ...deps, tenantId: t.id, keyId: t.keyId }
    await assert.rejects(withTx(deps.engine, async (scope) => {
      await emit(scope, ctx, 'order.created', { id: 'ord_rolled_back' })
      throw new Error('boom after emit')
    }), /boom/)
    await sleep(300)
    assert.equal(rx.requests.length, 0)
    const after = (await deps.db.selectFrom('deliveries').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n
    assert.equal(after, before)
    const events = await deps.db.selectFrom('events').select('payload').where('payload', 'like', '%ord_rolled_back%').execute()
    assert.equal(events.length, 0)
  })

  test('rotating the secret signs later deliveries with the new one; deleting stops deliveries but keeps records', async () => {
    const rx = await receiver()
    const wh = await addWebhook(t, rx.url, ['order.created'])
    await t.request('POST', '/v1/orders', { body: orderBody() })
    await rx.waitFor(1)
    const rotated = 'whsec_rotated_0123456789'
    const patched = await t.request('PATCH', `/v1/webhooks/${wh}`, { body: { secret: rotated } })
    assert.equal(patched.status, 200)
    assert.ok(!patched.text.includes(rotated) && !patched.text.includes(SECRET), 'secrets are never returned')
    await t.request('POST', '/v1/orders', { body: orderBody() })
    const [, second] = await rx.waitFor(2)
    assert.equal(second!.headers['x-webhook-signature'], createHmac('sha256', rotated).update(second!.body).digest('hex'))
    const del = await t.request('DELETE', `/v1/webhooks/${wh}`)
    assert.deepEqual(del.body.data, { id: wh, deleted: true })
    assert.equal((await t.request('GET', `/v1/webhooks/${wh}`)).status, 404)
    await t.request('POST', '/v1/orders', { body: orderBody() })
    await sleep(300)
    assert.equal(rx.requests.length, 2)
    assert.equal((await deliveriesOf(t, wh)).length, 2, 'records stay')
  })

  test('deactivating drops queued retries; the records stay failed', async () => {
    const rx = await receiver({ respond: [500] })
    const wh = await addWebhook(t, rx.url, ['order.created'])
    await t.request('POST', '/v1/orders', { body: orderBody() })
    await until(() => deliveriesOf(t, wh), (d) => d[0]?.attempts >= 1 && d[0]?.next_retry_at !== null, 'queued retry')
    await t.request('PATCH', `/v1/webhooks/${wh}`, { body: { active: false } })
    const [d] = await deliveriesOf(t, wh)
    assert.equal(d.status, 'failed')
    assert.equal(d.next_retry_at, null)
    const seen = rx.requests.length
    await sleep(600)
    assert.equal(rx.requests.length, seen, 'no more attempts')
    assert.equal((await t.request('POST', `/v1/webhooks/deliveries/${d.id}/retry`)).status, 409)
  })
})
