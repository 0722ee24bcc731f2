import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createApp } from '../../src/app.ts'
import { encodeCursor } from '../../src/http/pagination.ts'
import { EVENT_NAMES } from '../../src/events/catalog.ts'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'

// CONTRACT §15: GET /v1/events and /v1/events/:id — every event of the key's tenant (stored whether
// or not a subscription received it), the envelope as a delivery carries it, scope events:read.
// Paging and filters in depth: events-paging.test.ts; the body a receiver got: test/delivery/events-delivered.test.ts.

describe('/v1/events', () => {
  let app: TestApp
  let a: TestTenant
  let b: TestTenant
  const made: { a: string[]; b: string[] } = { a: [], b: [] }

  before(async () => {
    app = await startTestApp()
    a = await app.tenant('A')
    b = await app.tenant('B')
    // No subscription anywhere: the events are stored all the same.
    assert.equal((await a.request('POST', '/v1/customers', { body: { firstName: 'Ada', lastName: 'L', email: 'ada@example.com' } })).status, 201)
    const order = (await a.request('POST', '/v1/orders', { body: orderBody() })).body.data
    assert.equal((await a.request('POST', `/v1/orders/${order.id}/confirm`)).status, 200)
    assert.equal((await b.request('POST', '/v1/products', { body: { name: 'Tour', price: 10, currency: 'EUR' } })).status, 201)
    made.a = (await a.request('GET', '/v1/events?limit=100')).body.data.map((e: { id: string }) => e.id)
    made.b = (await b.request('GET', '/v1/events?limit=100')).body.data.map((e: { id: string }) => e.id)
  })
  after(() => app.close())

  test('events are stored without any subscription and listed newest first, each the §8 envelope', async () => {
    const r = await a.request('GET', '/v1/events')
    assert.equal(r.status, 200, r.text)
    assert.equal(r.headers.get('x-tenant-id'), a.id)
    assert.deepEqual(Object.keys(r.body), ['data', 'has_more', 'next_cursor'])
    assert.equal(r.body.has_more, false)
    assert.equal(r.body.next_cursor, null)
    // customer.created, order.created, then confirm: order.confirmed and order.updated (one transaction).
    assert.deepEqual(r.body.data.map((e: { event: string }) => e.event).sort(), ['customer.created', 'order.confirmed', 'order.created', 'order.updated'])
    assert.equal(r.body.data.at(-1).event, 'customer.created', 'oldest last')
    const ids = r.body.data.map((e: { id: string }) => e.id)
    assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first: ids descending')
    for (const e of r.body.data) {
      assert.deepEqual(Object.keys(e), ['id', 'event', 'timestamp', 'tenant_id', 'data'])
      assert.match(e.id, /^evt_/)
      assert.equal(e.tenant_id, a.id)
      assert.equal(e.timestamp, new Date(e.timestamp).toISOString())
    }
    const confirmed = r.body.data.find((e: { event: string }) => e.event === 'order.confirmed')
    const order = (await a.request('GET', `/v1/orders/${confirmed.data.id}`)).body.data
    assert.deepEqual(confirmed.data, order, 'data is the record as GET returns it after the change')
  })

  test('one event: the same envelope as its list item, as the same bytes', async () => {
    const list = await a.request('GET', '/v1/events?limit=1')
    const id = list.body.data[0].id
    const one = await a.request('GET', `/v1/events/${id}`)
    assert.equal(one.status, 200, one.text)
    const item = list.text.slice('{"data":['.length, list.text.indexOf(`],"has_more":`))
    assert.equal(one.text, `{"data":${item}}`)
    const head = await a.request('HEAD', `/v1/events/${id}`)
    assert.equal(head.status, 200)
  })

  test('tenancy: another tenant\'s events are neither listed nor found; unknown and malformed ids are 404', async () => {
    assert.equal(made.b.length, 1)
    assert.ok(!made.a.includes(made.b[0]!))
    for (const [who, theirs] of [[a, made.b[0]!], [b, made.a[0]!]] as const) {
      const r = await who.request('GET', `/v1/events/${theirs}`)
      assert.equal(r.status, 404)
      assert.equal(r.body.error.code, 'not_found')
    }
    for (const id of made.a) assert.equal((await a.request('GET', `/v1/events/${id}`)).status, 200)
    assert.equal((await b.request('GET', `/v1/events/${made.b[0]}`)).status, 200)
    const unknown = await a.request('GET', '/v1/events/evt_0190a0b0-1234-7abc-8def-0123456789ab')
    assert.equal(unknown.status, 404)
    for (const malformed of ['nope', 'ord_0190a0b0-1234-7abc-8def-0123456789ab']) {
      assert.equal((await a.request('GET', `/v1/events/${malformed}`)).status, 404, malformed)
    }
    // B's cursor naming A's oldest event reads B's events only.
    const across = await b.request('GET', `/v1/events?order=asc&cursor=${encodeCursor(made.a.at(-1)!)}`)
    assert.ok(across.body.data.every((e: { tenant_id: string }) => e.tenant_id === b.id))
  })

  test('scope: events:read (or *) reads them; every other scope is a 403 naming events:read', async () => {
    const others = await a.newKey({ scopes: ['orders:*', 'webhooks:*', 'keys:*', 'customers:*'] })
    for (const path of ['/v1/events', `/v1/events/${made.a[0]}`]) {
      const r = await a.request('GET', path, { key: others.key })
      assert.equal(r.status, 403, path)
      assert.equal(r.body.error.code, 'forbidden')
      assert.match(r.body.error.message, /events:read/)
      assert.equal((await a.request('GET', path, { key: null })).status, 401)
    }
    const reader = await a.newKey({ scopes: ['events:read'] })
    assert.equal((await a.request('GET', '/v1/events', { key: reader.key })).body.data.length, made.a.length)
    assert.equal((await a.request('GET', `/v1/events/${made.a[0]}`, { key: reader.key })).status, 200)
    assert.equal((await a.request('GET', '/v1/orders', { key: reader.key })).status, 403, 'events:read reads events only')
  })

  test('type: names, families and lists of them; an unknown name or family is a 400 naming it', async () => {
    const names = async (q: string) => (await a.request('GET', `/v1/events?${q}`)).body.data.map((e: { event: string }) => e.event).sort()
    assert.deepEqual(await names('type=order.created'), ['order.created'])
    assert.deepEqual(await names('type=order.*'), ['order.confirmed', 'order.created', 'order.updated'])
    assert.deepEqual(await names('type=customer.created,order.confirmed'), ['customer.created', 'order.confirmed'])
    assert.deepEqual(await names('type=order.created,order.*,customer.*'), ['customer.created', 'order.confirmed', 'order.created', 'order.updated'])
    assert.deepEqual(await names('type=payment.*'), [])
    assert.deepEqual(await names(`type=${EVENT_NAMES.join(',')}`), await names(''), 'every name: every event')
    for (const [type, message] of [
      ['order.shipped', /unknown event name 'order\.shipped'/],
      ['order.created,shipment.*', /unknown event family 'shipment\.\*'/],
      ['*', /unknown event name '\*'/],
      ['order', /unknown event name 'order'/],
      ['', /without empty names/],
      ['order.created,', /without empty names/],
      ['order.created, order.updated', /unknown event name ' order\.updated'/],
      ['ORDER.CREATED', /unknown event name/],
    ] as const) {
      const r = await a.request('GET', `/v1/events?type=${encodeURIComponent(type)}`)
      assert.equal(r.status, 400, type)
      assert.equal(r.body.error.code, 'bad_request')
      assert.equal(r.body.error.details[0].path, 'type')
      assert.match(r.body.error.details[0].message, message, type)
    }
  })

  test('created_after and created_before are exclusive, in the format of the other lists\' time filters', async () => {
    const all = (await a.request('GET', '/v1/events?order=asc')).body.data as { id: string; timestamp: string }[]
    const first = all[0]!
    const last = all.at(-1)!
    const ids = async (q: string) => (await a.request('GET', `/v1/events?order=asc&${q}`)).body.data.map((e: { id: string }) => e.id)
    assert.ok(!(await ids(`created_after=${first.timestamp}`)).includes(first.id))
    assert.ok((await ids(`created_after=${new Date(Date.parse(first.timestamp) - 1).toISOString()}`)).includes(first.id))
    assert.ok(!(await ids(`created_before=${last.timestamp}`)).includes(last.id))
    assert.ok((await ids(`created_before=${new Date(Date.parse(last.timestamp) + 1).toISOString()}`)).includes(last.id))
    assert.deepEqual(await ids('created_after=2000-01-01&created_before=2000-01-02'), [])
    assert.deepEqual(await ids(`created_after=${last.timestamp}&created_before=${first.timestamp}`), [], 'an empty range is empty, not an error')
    // The other spellings every list takes: a date alone, an offset.
    assert.deepEqual(await ids('created_after=2000-01-01'), all.map((e) => e.id))
    assert.deepEqual(await ids('created_after=2000-01-01T02:00:00%2B02:00'), all.map((e) => e.id))
  })

  test('bad queries are 400s naming the parameter', async () => {
    for (const [q, path] of [
      ['limit=0', 'limit'], ['limit=101', 'limit'], ['limit=x', 'limit'], ['order=up', 'order'], ['order=ASC', 'order'],
      ['created_after=yesterday', 'created_after'], ['created_before=2027-13-01', 'created_before'], ['since=2027-01-01', 'since'],
      ['type=order.created&type=order.updated', 'type'], [`cursor=${encodeCursor('ord_0190a0b0-1234-7abc-8def-0123456789ab')}`, 'cursor'],
    ]) {
      const r = await a.request('GET', `/v1/events?${q}`)
      assert.equal(r.status, 400, `${q}: ${r.text}`)
      assert.equal(r.body.error.code, 'bad_request')
      assert.equal(r.body.error.details[0].path, path, q)
    }
  })

  test('the OpenAPI document has both routes with their query parameters, scope and the Event schema', async () => {
    const doc = (await app.request('GET', '/v1/openapi.json')).body
    const list = doc.paths['/v1/events'].get
    assert.equal(list.operationId, 'listEvents')
    assert.equal(list['x-required-scope'], 'events:read')
    assert.match(list.description, /Needs the scope `events:read` \(or `\*`\)/)
    assert.deepEqual(list.parameters.map((p: { name: string }) => p.name).sort(), ['created_after', 'created_before', 'cursor', 'limit', 'order', 'type'])
    const type = list.parameters.find((p: { name: string }) => p.name === 'type')
    assert.ok(new RegExp(type.schema.pattern).test('order.*,payment.received') && !new RegExp(type.schema.pattern).test('order.shipped'))
    const ok = list.responses['200'].content['application/json'].schema
    assert.equal(ok.properties.data.items.$ref, '#/components/schemas/Event')
    const one = doc.paths['/v1/events/{id}'].get
    assert.equal(one.responses['200'].content['application/json'].schema.properties.data.$ref, '#/components/schemas/Event')
    assert.ok(one.responses['404'])
    assert.equal(doc.tags.filter((t: { name: string }) => t.name === 'Events').length, 1, 'one Events tag: the API\'s and the webhooks section\'s')
  })

  test('/v1/events/stream is not taken by /v1/events/:id, in whichever order the routes come', async () => {
    const stream = app.server.routes.find((r) => r.path === '/v1/events/stream')!
    const rest = app.server.routes.filter((r) => r !== stream)
    for (const routes of [[...rest, stream], [stream, ...rest]]) {
      const h = createApp(app.server.deps, routes)
      try {
        const get = (path: string) => h.fetch(new Request(`http://127.0.0.1${path}`, { headers: { authorization: `Bearer ${a.key}` } }))
        const s = await get('/v1/events/stream')
        assert.equal(s.status, 200)
        assert.equal(s.headers.get('content-type'), 'text/event-stream; charset=utf-8')
        await s.body!.cancel()
        assert.equal((await get(`/v1/events/${made.a[0]}`)).status, 200)
      } finally {
        await h.close()
      }
    }
  })
})
