import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createHmac, randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

const SECRET = 'standard-webhooks-secret-0123'
const headersOf = (h: Record<string, string | string[] | undefined>) => ({
  'webhook-id': String(h['webhook-id']), 'webhook-timestamp': String(h['webhook-timestamp']), 'webhook-signature': String(h['webhook-signature']),
})

/** §11 Standard Webhooks signatures, checked by the real `standardwebhooks` library as a receiver would. */
describe('Standard Webhooks headers on every delivery', () => {
  let app: TestApp
  let t: TestTenant
  let rx: Receiver
  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true, retryBaseMs: 1100 })
    t = await app.tenant()
    rx = await startReceiver({ respond: [500, 200] })
  })
  after(async () => {
    await app.close()
    await rx.close()
  })

  test('every attempt verifies with whsec_ + base64(secret), each with its own timestamp; the seed headers stay as they were', async () => {
    const r = await t.request('POST', '/v1/webhooks', { body: { url: rx.url, events: ['order.created'], secret: SECRET } })
    assert.equal(r.status, 201)
    await t.request('POST', '/v1/orders', { body: orderBody() })
    const [first, second] = await rx.waitFor(2, 8000)
    const wh = new Webhook(`whsec_${Buffer.from(SECRET, 'utf8').toString('base64')}`)
    for (const req of [first!, second!]) {
      const verified = wh.verify(req.body, headersOf(req.headers)) as { id: string }
      assert.equal(verified.id, req.headers['x-webhook-id'])
      assert.equal(req.headers['webhook-id'], req.headers['x-webhook-id'])
      assert.match(String(req.headers['x-webhook-signature']), /^[0-9a-f]{64}$/)
      assert.match(String(req.headers['x-webhook-timestamp']), /Z$/, 'X-Webhook-Timestamp is still the event time')
    }
    // A retry carries the time of its own attempt, not the event's.
    assert.ok(Number(second!.headers['webhook-timestamp']) >= Number(first!.headers['webhook-timestamp']) + 1)
    assert.equal(first!.headers['x-webhook-timestamp'], second!.headers['x-webhook-timestamp'])
    // A tampered body fails.
    assert.throws(() => wh.verify(first!.body.replace('"order.created"', '"order.cancelled"'), headersOf(first!.headers)))
  })

  test('a replay of a delivery outside the receiver\'s tolerance is refused by the library', async () => {
    const [req] = rx.requests
    const wh = new Webhook(`whsec_${Buffer.from(SECRET, 'utf8').toString('base64')}`)
    const realNow = Date.now
    Date.now = () => realNow() + 6 * 60 * 1000 // the same request arriving again six minutes later
    try {
      assert.throws(() => wh.verify(req!.body, headersOf(req!.headers)), /timestamp too old/i)
    } finally {
      Date.now = realNow
    }
    assert.doesNotThrow(() => wh.verify(req!.body, headersOf(req!.headers)))
  })

  test('a whsec_ secret, given or generated, verifies as it is; X-Webhook-Signature keys with the whole string (§16)', async () => {
    const given = `whsec_${randomBytes(32).toString('base64')}`
    const a = await t.request('POST', '/v1/webhooks', { body: { url: `${rx.url}/given`, events: ['customer.created'], secret: given } })
    assert.equal(a.status, 201)
    assert.equal('secret' in a.body.data, false, 'a secret the body gave is never returned')
    const b = await t.request('POST', '/v1/webhooks', { body: { url: `${rx.url}/generated`, events: ['customer.created'] }, headers: { 'idempotency-key': 'gen-1' } })
    assert.equal(b.status, 201)
    const generated = b.body.data.secret as string
    assert.match(generated, /^whsec_[A-Za-z0-9+/]{43}=$/)
    assert.equal(Buffer.from(generated.slice(6), 'base64').length, 32)
    const replay = await t.request('POST', '/v1/webhooks', { body: { url: `${rx.url}/generated`, events: ['customer.created'] }, headers: { 'idempotency-key': 'gen-1' } })
    assert.equal(replay.body.data.id, b.body.data.id)
    assert.equal(replay.body.data.secret, null, 'a replay never shows the secret')
    assert.equal('secret' in (await t.request('GET', `/v1/webhooks/${b.body.data.id}`)).body.data, false)

    const seen = rx.requests.length
    assert.equal((await t.request('POST', '/v1/customers', { body: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' } })).status, 201)
    const got = (await rx.waitFor(seen + 2, 8000)).slice(seen)
    for (const [path, secret] of [['/given', given], ['/generated', generated]] as const) {
      const req = got.find((r) => r.url === path)!
      assert.ok(req, `a delivery to ${path}`)
      const verified = new Webhook(secret).verify(req.body, headersOf(req.headers)) as { event: string }
      assert.equal(verified.event, 'customer.created')
      assert.equal(req.headers['x-webhook-signature'], createHmac('sha256', Buffer.from(secret, 'utf8')).update(req.body).digest('hex'))
    }
  })

  test('custom headers cannot take the Standard Webhooks names', async () => {
    const r = await t.request('POST', '/v1/webhooks', { body: { url: rx.url, events: ['*'], secret: SECRET, headers: { 'Webhook-Signature': 'v1,forged', 'webhook-id': 'x' } } })
    assert.equal(r.status, 422)
    assert.deepEqual(r.body.error.details.map((d: { path: string }) => d.path).sort(), ['headers.Webhook-Signature', 'headers.webhook-id'])
  })
})
