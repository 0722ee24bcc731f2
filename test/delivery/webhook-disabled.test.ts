import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { until } from '../helpers/cli.ts'
import { queryRows } from '../helpers/engine.ts'
import { startReceiver, type Receiver, type ReceiverOptions } from '../helpers/receiver.ts'

const SECRET = 'disabled-event-secret-0123'
const HOUR = 3_600_000

/**
 * CONTRACT §15's `webhook.disabled`: when endpoint health (§11) disables a subscription, the
 * tenant's other subscriptions that ask for it (or for `*`) get an event whose `data` is that
 * subscription as GET /v1/webhooks/:id shows it. A real serve on the suite's engine, real
 * receivers on 127.0.0.1, and a clock the test holds still and moves (the `failing` path).
 */
describe('webhook.disabled', () => {
  let app: TestApp
  let now = Date.parse('2027-03-01T09:00:00.000Z')
  const receivers: Receiver[] = []
  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true, disableAfterMs: HOUR, retryBaseMs: 86_400_000 }, { clock: { now: () => new Date(now) } })
  })
  after(async () => {
    await app.close()
    await Promise.all(receivers.map((r) => r.close()))
  })

  const receiver = async (respond?: ReceiverOptions['respond']) => {
    const rx = await startReceiver(respond ? { respond } : {})
    receivers.push(rx)
    return rx
  }
  const subscribe = async (t: TestTenant, rx: Receiver, events: string[]) => {
    const r = await t.request('POST', '/v1/webhooks', { body: { url: rx.url, events, secret: SECRET } })
    assert.equal(r.status, 201, r.text)
    return r.body.data.id as string
  }
  const order = async (t: TestTenant) => assert.equal((await t.request('POST', '/v1/orders', { body: orderBody() })).status, 201)
  const webhook = async (t: TestTenant, id: string) => (await t.request('GET', `/v1/webhooks/${id}`)).body.data
  const deliveries = async (t: TestTenant, id: string) =>
    (await t.request('GET', `/v1/webhooks/deliveries?webhook_id=${id}&limit=100`)).body.data as { event: string; status: string; payload: { data: { id: string } } }[]
  /** The body a receiver got, its signature checked. */
  const body = (rx: Receiver, i = 0) => {
    const got = rx.requests[i]!
    assert.equal(got.headers['x-webhook-signature'], createHmac('sha256', SECRET).update(got.body).digest('hex'))
    return JSON.parse(got.body)
  }

  test('a 410 disables A; the tenant\'s subscriptions to webhook.disabled or "*" get one event with A as GET shows it; another tenant\'s get nothing', async () => {
    const ours = await app.tenant('Ours')
    const theirs = await app.tenant('Theirs')
    const [goneRx, toldRx, starRx, ordersRx, theirRx] = [await receiver([410]), await receiver(), await receiver(), await receiver(), await receiver()]
    const a = await subscribe(ours, goneRx, ['*'])
    const told = await subscribe(ours, toldRx, ['webhook.disabled'])
    const star = await subscribe(ours, starRx, ['*'])
    const orders = await subscribe(ours, ordersRx, ['order.created'])
    const their = await subscribe(theirs, theirRx, ['*'])
    await order(ours)

    await toldRx.waitFor(1)
    const event = body(toldRx)
    const shown = await webhook(ours, a)
    assert.equal(shown.active, false)
    assert.equal(shown.disabled_reason, 'gone')
    assert.deepEqual(Object.keys(event), ['id', 'event', 'timestamp', 'tenant_id', 'data'])
    assert.equal(event.event, 'webhook.disabled')
    assert.equal(event.tenant_id, ours.id)
    assert.equal(event.timestamp, shown.disabled_at)
    assert.deepEqual(event.data, shown, 'data is A exactly as GET /v1/webhooks/:id shows it')
    // Stored as every event is, byte for byte what was signed and sent: what the events API reads.
    const [stored] = await queryRows<{ name: string; tenant_id: string; payload: string }>(app.dbFile, 'SELECT name, tenant_id, payload FROM events WHERE id = ?', event.id)
    assert.deepEqual(stored, { name: 'webhook.disabled', tenant_id: ours.id, payload: toldRx.requests[0]!.body })

    // "*" of the same tenant gets it too (after its order.created); order.created alone does not; A itself, inactive by then, gets none.
    await starRx.waitFor(2)
    assert.deepEqual(starRx.requests.map((_, i) => body(starRx, i).event).sort(), ['order.created', 'webhook.disabled'])
    assert.deepEqual(starRx.requests.map((r) => JSON.parse(r.body).id).sort(), [await _orderEventId(ours, orders), event.id].sort())
    const byWebhook = async (id: string) => (await deliveries(ours, id)).map((d) => d.event).sort()
    assert.deepEqual(await byWebhook(a), ['order.created'])
    assert.deepEqual(await byWebhook(told), ['webhook.disabled'])
    assert.deepEqual(await byWebhook(star), ['order.created', 'webhook.disabled'])
    assert.deepEqual(await byWebhook(orders), ['order.created'])
    assert.equal(goneRx.requests.length, 1)

    // The other tenant: the first event its "*" subscription receives is its own order, and it has no other delivery.
    await order(theirs)
    await theirRx.waitFor(1)
    assert.equal(body(theirRx).event, 'order.created')
    assert.equal(body(theirRx).tenant_id, theirs.id)
    assert.deepEqual((await deliveries(theirs, their)).map((d) => d.event), ['order.created'])
    assert.equal(theirRx.requests.length, 1)
    await until('webhook.disabled recorded as delivered', async () => (await deliveries(ours, told)).every((d) => d.status === 'delivered'))
    assert.equal(toldRx.requests.length, 1, 'one delivery')
  })

  test('failing for --disable-after on the test\'s clock: a moment less keeps A; then it is disabled as failing and the event says so', async () => {
    const t = await app.tenant('Failing')
    const [failRx, toldRx] = [await receiver([500]), await receiver()]
    const a = await subscribe(t, failRx, ['order.created'])
    await subscribe(t, toldRx, ['webhook.disabled'])
    const started = new Date(now).toISOString()
    const failures = async (n: number) => until(`${n} failed attempts recorded`, async () => {
      const list = await deliveries(t, a)
      return list.length === n && list.every((d) => d.status === 'failed')
    })

    await order(t)
    await failures(1)
    assert.equal((await webhook(t, a)).failing_since, started)
    now += HOUR - 1
    await order(t)
    await failures(2)
    const still = await webhook(t, a)
    assert.equal(still.active, true, 'failing for an hour less a millisecond: still active')
    now += 1
    await order(t)
    await toldRx.waitFor(1)
    const event = body(toldRx)
    const shown = await webhook(t, a)
    assert.equal(shown.active, false)
    assert.equal(shown.disabled_reason, 'failing')
    assert.equal(shown.failing_since, started)
    assert.equal(shown.disabled_at, new Date(now).toISOString())
    assert.equal(event.event, 'webhook.disabled')
    assert.equal(event.timestamp, shown.disabled_at)
    assert.deepEqual(event.data, shown)
    assert.equal(failRx.requests.length, 3)
  })

  test('a PATCH {"active": false} is not endpoint health: no webhook.disabled for it', async () => {
    const t = await app.tenant('Operator')
    const [toldRx, pausedRx, goneRx] = [await receiver(), await receiver(), await receiver([410])]
    const told = await subscribe(t, toldRx, ['webhook.disabled'])
    const paused = await subscribe(t, pausedRx, ['order.created'])
    assert.equal((await t.request('PATCH', `/v1/webhooks/${paused}`, { body: { active: false } })).body.data.active, false)
    // Then a disabling by endpoint health: its event is the first, and the only one, the subscription gets.
    const gone = await subscribe(t, goneRx, ['order.created'])
    await order(t)
    await toldRx.waitFor(1)
    assert.equal(body(toldRx).data.id, gone)
    assert.deepEqual((await deliveries(t, told)).map((d) => d.payload.data.id), [gone])
    assert.equal(pausedRx.requests.length, 0)
  })
})

/** The id of the order.created event a subscription received (its only delivery). */
async function _orderEventId(t: TestTenant, webhookId: string): Promise<string> {
  const list = (await t.request('GET', `/v1/webhooks/deliveries?webhook_id=${webhookId}&limit=100`)).body.data as { event_id: string }[]
  assert.equal(list.length, 1)
  return list[0]!.event_id
}
