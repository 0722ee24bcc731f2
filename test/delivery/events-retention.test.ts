import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { pruneStep, type EventCursor } from '../../src/engine/retention.ts'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { until } from '../helpers/cli.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

// CONTRACT §15: "Events are kept as long as §11's retention keeps deliveries, whether or not any
// subscription received them." Retention runs here step by step (engine/retention.ts pruneStep(),
// what the pruner runs with cutoff = now − --retention), at cutoffs placed exactly on the events'
// own times, and the events API shows what is kept: an event nobody received stays until it is
// older than the cutoff, one with a delivery until that delivery finished before it.

describe('the events API and retention', () => {
  let app: TestApp
  let t: TestTenant
  let ok: Receiver
  let failing: Receiver

  /** Every retention step at `cutoff` (what --retention = now − cutoff would do). */
  const prune = async (cutoff: string) => {
    let cursor: EventCursor | null = null
    for (let i = 0; i < 100; i++) {
      const r = await pruneStep(app.server.deps.engine, cutoff, cursor)
      cursor = r.cursor
      if (!r.more) return
    }
    assert.fail('retention did not finish')
  }
  const listed = async () => new Set((await t.request('GET', '/v1/events?limit=100')).body.data.map((e: { id: string }) => e.id))
  const found = async (id: string) => (await t.request('GET', `/v1/events/${id}`)).status === 200

  before(async () => {
    ok = await startReceiver()
    failing = await startReceiver({ respond: [500] })
    // Retention 0: no pruner of its own; a retry base of an hour keeps the failed delivery queued.
    app = await startTestApp({ allowPrivateTargets: true, retentionMs: 0, retryBaseMs: 3_600_000 })
    t = await app.tenant()
  })
  after(async () => {
    await app.close()
    await ok.close()
    await failing.close()
  })

  test('an event nobody subscribed to is kept until retention passes its time; one with a delivery until retention passes the delivery\'s end', async () => {
    await t.request('POST', '/v1/webhooks', { body: { url: ok.url, events: ['order.created'], secret: 'retention-secret-01' } })
    await t.request('POST', '/v1/webhooks', { body: { url: failing.url, events: ['customer.created'], secret: 'retention-secret-01' } })
    const lone = (await t.request('POST', '/v1/products', { body: { name: 'No subscriber', price: 10, currency: 'EUR' } })).body.data
    await t.request('POST', '/v1/orders', { body: orderBody() })
    await t.request('POST', '/v1/customers', { body: { firstName: 'Q', lastName: 'Ueued', email: 'q@example.com' } })
    const events = (await t.request('GET', '/v1/events?limit=100')).body.data as { id: string; event: string; timestamp: string; data: { id: string } }[]
    const byName = (name: string) => events.find((e) => e.event === name)!
    const product = byName('product.created')
    const order = byName('order.created')
    const customer = byName('customer.created')
    assert.equal(product.data.id, lone.id)
    const delivered = await until('the order event delivered', async () => {
      const d = (await t.request('GET', '/v1/webhooks/deliveries?event=order.created')).body.data[0]
      return d?.status === 'delivered' && d
    })
    await until('the customer event failed, its retry queued', async () => {
      const d = (await t.request('GET', '/v1/webhooks/deliveries?event=customer.created')).body.data[0]
      return d?.status === 'failed' && d.next_retry_at
    })

    // Not before: a cutoff at the event's own time keeps it (only what is older goes).
    await prune(product.timestamp)
    assert.deepEqual(await listed(), new Set([product.id, order.id, customer.id]))
    // Past the lone event's time it goes; the order's event stays while its delivery is kept (it
    // finished after the cutoff), though the event itself is older; the queued one stays.
    const ended = delivered.last_attempt_at as string
    assert.ok(ended > order.timestamp)
    await prune(ended)
    assert.deepEqual(await listed(), new Set([order.id, customer.id]))
    assert.equal(await found(product.id), false)
    assert.equal(await found(order.id), true)
    // Once retention passes the delivery's end, the delivery goes and its event with it.
    await prune(new Date(Date.parse(ended) + 1).toISOString())
    assert.deepEqual(await listed(), new Set([customer.id]))
    assert.equal(await found(order.id), false)
    assert.equal((await t.request('GET', `/v1/webhooks/deliveries/${delivered.id}`)).status, 404)
    // However old, an event whose delivery is still queued is kept.
    await prune(new Date(Date.now() + 86_400_000).toISOString())
    assert.equal(await found(customer.id), true)
  })
})
