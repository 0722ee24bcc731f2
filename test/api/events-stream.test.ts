import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { until } from '../helpers/cli.ts'
import { openStream, type SseClient } from '../helpers/sse-client.ts'

// CONTRACT §15: GET /v1/events/stream, on the engine TRAVELOPS_TEST_ENGINE names, over real HTTP.
// Restarts, several processes and a consumer that reads nothing: events-stream-serve.test.ts.

const customer = (n: number) => ({ firstName: 'Ada', lastName: `L${n}`, email: `ada${n}@example.com` })

describe('GET /v1/events/stream', () => {
  let app: TestApp
  let a: TestTenant
  let b: TestTenant
  const open: SseClient[] = []
  const stream = async (key: string, opts: { lastEventId?: string; query?: string } = {}) => {
    const s = await openStream(app.url, key, opts)
    open.push(s)
    return s
  }

  before(async () => {
    app = await startTestApp({ metrics: true, rateLimit: 100_000 })
    a = await app.tenant('A')
    b = await app.tenant('B')
  })
  after(async () => {
    await Promise.all(open.map((s) => s.close()))
    await app.close()
  })

  test('a new event reaches the stream as id, event name and the envelope GET /v1/events/:id shows', async () => {
    const s = await stream(a.key)
    assert.equal(s.status, 200)
    assert.equal(s.headers.get('content-type'), 'text/event-stream; charset=utf-8')
    assert.equal(s.headers.get('cache-control'), 'no-store')
    const order = (await a.request('POST', '/v1/orders', { body: orderBody() })).body.data
    const m = await s.next()
    assert.equal(m.event, 'order.created')
    const stored = await a.request('GET', `/v1/events/${m.id}`)
    assert.equal(m.data, JSON.stringify(stored.body.data), 'the envelope, byte for byte')
    assert.equal(JSON.parse(m.data).data.id, order.id)
  })

  test('only the tenant\'s own events, and only the names its `type` asks for', async () => {
    const all = await stream(b.key)
    const customers = await stream(b.key, { query: 'type=customer.*,payment.received' })
    await a.request('POST', '/v1/customers', { body: customer(1) })
    await b.request('POST', '/v1/orders', { body: orderBody() })
    const mine = (await b.request('POST', '/v1/customers', { body: customer(2) })).body.data
    // The first message of each is its own tenant's, in order: A's customer never came.
    assert.equal((await all.next()).event, 'order.created')
    const c = await all.next()
    assert.equal(c.event, 'customer.created')
    const filtered = await customers.next()
    assert.equal(filtered.id, c.id, 'the order was left out')
    assert.equal(JSON.parse(filtered.data).data.id, mine.id)
  })

  test('Last-Event-ID (or ?after=) resumes with the events after it, in order, then new ones', async () => {
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await a.request('POST', '/v1/customers', { body: customer(10 + i) })).body.data.id)
    const list = (await a.request('GET', '/v1/events?type=customer.created&limit=3')).body.data.reverse() as { id: string }[]
    const resumed = await stream(a.key, { lastEventId: list[0]!.id })
    assert.deepEqual([(await resumed.next()).id, (await resumed.next()).id], [list[1]!.id, list[2]!.id])
    const byQuery = await stream(a.key, { query: `after=${list[1]!.id}` })
    assert.equal((await byQuery.next()).id, list[2]!.id)
    const later = (await a.request('POST', '/v1/orders', { body: orderBody() })).body.data.id
    assert.equal(JSON.parse((await resumed.next()).data).data.id, later)
    assert.equal(JSON.parse((await byQuery.next()).data).data.id, later)
  })

  test('a malformed Last-Event-ID, after or type is a 400 in the error shape, before any stream opens', async () => {
    for (const [opts, message] of [
      [{ lastEventId: 'evt_nope' }, /Last-Event-ID must be an event id/],
      [{ query: 'after=ord_00000000-0000-7000-8000-000000000000' }, /after/],
      [{ query: 'type=order.shipped' }, /order\.shipped/],
      [{ query: 'since=now' }, /since/],
    ] as const) {
      const r = await fetch(`${app.url}/v1/events/stream${'query' in opts ? `?${opts.query}` : ''}`, {
        headers: { authorization: `Bearer ${a.key}`, ...('lastEventId' in opts ? { 'last-event-id': opts.lastEventId } : {}) },
      })
      assert.equal(r.status, 400, JSON.stringify(opts))
      const body = await r.json() as { error: { code: string; message: string; details: { path: string; message: string }[] } }
      assert.equal(body.error.code, 'bad_request')
      assert.match(JSON.stringify(body.error), message)
    }
  })

  test('scopes: a key without events:read gets 403; one with only events:read streams', async () => {
    const without = await a.newKey({ scopes: ['orders:*', 'customers:*'] })
    const r = await fetch(`${app.url}/v1/events/stream`, { headers: { authorization: `Bearer ${without.key}` } })
    assert.equal(r.status, 403)
    assert.match((await r.json() as { error: { message: string } }).error.message, /events:read/)
    const only = await a.newKey({ scopes: ['events:read'] })
    const s = await stream(only.key)
    assert.equal(s.status, 200)
    await a.request('POST', '/v1/orders', { body: orderBody() })
    assert.equal((await s.next()).event, 'order.created')
  })

  test('at most 5 streams per key: the 6th is 429 rate_limited with Retry-After, and a closed one gives its place back', async () => {
    const k = await a.newKey({ scopes: ['events:read'] })
    const five = await Promise.all(Array.from({ length: 5 }, () => openStream(app.url, k.key)))
    open.push(...five)
    assert.deepEqual(five.map((s) => s.status), [200, 200, 200, 200, 200])
    const sixth = await fetch(`${app.url}/v1/events/stream`, { headers: { authorization: `Bearer ${k.key}` } })
    assert.equal(sixth.status, 429)
    assert.equal(sixth.headers.get('retry-after'), '5')
    assert.equal((await sixth.json() as { error: { code: string } }).error.code, 'rate_limited')
    // Another key of the tenant is not held back by this one's.
    const other = await stream(a.key)
    assert.equal(other.status, 200)
    await five[0]!.close()
    const again = await until('a place given back', async () => {
      const s = await openStream(app.url, k.key)
      if (s.status === 200) return s
      await s.close()
      return undefined
    })
    open.push(again)
  })

  test('HEAD answers the stream\'s status and headers and holds no stream; /metrics counts the open ones', async () => {
    const k = await a.newKey({ scopes: ['events:read'] })
    for (let i = 0; i < 6; i++) {
      const head = await fetch(`${app.url}/v1/events/stream`, { method: 'HEAD', headers: { authorization: `Bearer ${k.key}` } })
      assert.equal(head.status, 200, 'six HEADs: none holds one of the key\'s five places')
      assert.equal(head.headers.get('content-type'), 'text/event-stream; charset=utf-8')
      assert.equal(await head.text(), '')
    }
    const gauge = async () => Number(/^travelops_event_streams (\d+)$/m.exec(await (await fetch(`${app.url}/metrics`)).text())?.[1])
    const before = await gauge()
    const s = await stream(k.key)
    assert.equal(await gauge(), before + 1)
    await a.request('POST', '/v1/orders', { body: orderBody() })
    await s.next()
    assert.match(await (await fetch(`${app.url}/metrics`)).text(), /^travelops_event_stream_messages_total [1-9]\d*$/m)
    await s.close()
    await until('the stream counted out', async () => (await gauge()) === before)
  })
})
