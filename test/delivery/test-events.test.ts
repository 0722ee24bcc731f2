import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import * as v from 'valibot'
import { EVENT_NAMES } from '../../src/events/catalog.ts'
import { exampleData } from '../../src/modules/webhooks/index.ts'
import { EventView } from '../../src/modules/webhooks/event-view.ts'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

const SECRET = 'test-events-secret-0123'

/** §11 Test events: POST /v1/webhooks/:id/test sends an example, marked "test": true, to that subscription only. */
describe('test events', () => {
  let app: TestApp
  let t: TestTenant
  let rx: Receiver
  let other: Receiver
  const webhook = async (url: string, events: string[], tenant = t) => {
    const r = await tenant.request('POST', '/v1/webhooks', { body: { url, events, secret: SECRET } })
    assert.equal(r.status, 201)
    return r.body.data.id as string
  }
  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true })
    t = await app.tenant()
    rx = await startReceiver()
    other = await startReceiver()
  })
  after(async () => {
    await app.close()
    await rx.close()
    await other.close()
  })

  test('the default event arrives signed, with "test": true and an example record, at that subscription only; 202 with the delivery', async () => {
    const id = await webhook(rx.url, ['invoice.paid', 'order.created'])
    await webhook(other.url, ['*'])
    const r = await t.request('POST', `/v1/webhooks/${id}/test`, { body: {} })
    assert.equal(r.status, 202)
    assert.equal(r.body.data.webhook_id, id)
    assert.equal(r.body.data.event, 'invoice.paid')
    assert.equal(r.body.data.payload.test, true)
    const [got] = await rx.waitFor(1)
    assert.equal(got!.headers['x-webhook-signature'], createHmac('sha256', SECRET).update(got!.body).digest('hex'))
    const body = JSON.parse(got!.body)
    assert.equal(body.test, true)
    assert.equal(body.event, 'invoice.paid')
    assert.equal(body.tenant_id, t.id)
    assert.equal(body.data.status, 'paid')
    assert.deepEqual(body, r.body.data.payload)
    await new Promise((res) => setTimeout(res, 200))
    assert.equal(other.requests.length, 0, 'no other subscription gets it')
    const d = (await t.request('GET', `/v1/webhooks/deliveries/${r.body.data.id}`)).body.data
    assert.equal(d.status, 'delivered')
  })

  test('an event named in the body; "*" subscriptions default to order.created; no body at all is fine', async () => {
    const star = await webhook(rx.url, ['*'])
    assert.equal((await t.request('POST', `/v1/webhooks/${star}/test`)).body.data.event, 'order.created')
    const r = await t.request('POST', `/v1/webhooks/${star}/test`, { body: { event: 'payment.refunded' } })
    assert.equal(r.status, 202)
    assert.equal(r.body.data.payload.data.status, 'partially_refunded')
  })

  test('refusals: an event it does not receive (422), an unknown name (422), inactive (409), another tenant\'s or unknown (404)', async () => {
    const id = await webhook(rx.url, ['order.created'])
    const not = await t.request('POST', `/v1/webhooks/${id}/test`, { body: { event: 'customer.created' } })
    assert.equal(not.status, 422)
    assert.equal(not.body.error.details[0].path, 'event')
    assert.equal((await t.request('POST', `/v1/webhooks/${id}/test`, { body: { event: 'order.shipped' } })).status, 422)
    assert.equal((await t.request('POST', `/v1/webhooks/${id}/test`, { body: { extra: 1 } })).status, 422)
    await t.request('PATCH', `/v1/webhooks/${id}`, { body: { active: false } })
    assert.equal((await t.request('POST', `/v1/webhooks/${id}/test`, { body: {} })).status, 409)
    const u = await app.tenant('Other')
    const theirs = await webhook(other.url, ['*'], u)
    assert.equal((await t.request('POST', `/v1/webhooks/${theirs}/test`, { body: {} })).status, 404)
    assert.equal((await t.request('POST', '/v1/webhooks/wh_00000000-0000-7000-8000-000000000000/test', { body: {} })).status, 404)
    const readOnly = await t.newKey({ scopes: ['webhooks:read'] })
    assert.equal((await t.request('POST', `/v1/webhooks/${id}/test`, { body: {}, key: readOnly.key })).status, 403)
  })

  test('webhook.disabled too: its example is a subscription disabled as gone', async () => {
    const rx2 = await startReceiver()
    try {
      const id = await webhook(rx2.url, ['webhook.disabled'])
      const r = await t.request('POST', `/v1/webhooks/${id}/test`, { body: {} })
      assert.equal(r.status, 202)
      assert.equal(r.body.data.event, 'webhook.disabled')
      const [got] = await rx2.waitFor(1)
      const body = JSON.parse(got!.body)
      assert.equal(body.test, true)
      assert.equal(body.event, 'webhook.disabled')
      assert.equal(body.data.active, false)
      assert.equal(body.data.disabled_reason, 'gone')
      assert.match(body.data.id, /^wh_0{8}-/)
      assert.equal(v.safeParse(EventView, body).success, true)
    } finally {
      await rx2.close()
    }
  })

  test('every event has an example record with exactly the shape of a real one', () => {
    for (const event of EVENT_NAMES) {
      const body = { id: 'evt_00000000-0000-7000-8000-000000000000', event, timestamp: '2026-11-24T12:00:00.000Z', tenant_id: 'ten_00000000-0000-7000-8000-000000000000', test: true, data: exampleData(event, 'ten_00000000-0000-7000-8000-000000000000', '2026-11-24T12:00:00.000Z') }
      const r = v.safeParse(EventView, body)
      assert.ok(r.success, `${event}: ${JSON.stringify(r.issues?.map((i) => [i.path?.map((p) => p.key).join('.'), i.message]))}`)
    }
  })
})
