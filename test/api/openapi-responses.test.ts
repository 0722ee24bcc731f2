import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { RouteDef } from '../../src/http/define-route.ts'
import { EVENT_NAMES } from '../../src/events/catalog.ts'
import { orderBody, startTestApp, type Reply, type TestApp, type TestSession, type TestTenant } from '../helpers/app.ts'
import { invoiceBody, itineraryBody, paymentBody } from '../helpers/billing.ts'
import { until } from '../helpers/cli.ts'
import { documentValidator, successSchema } from '../helpers/openapi.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'
import { openStream } from '../helpers/sse-client.ts'

/**
 * Real answers of every route, against the response schemas GET /v1/openapi.json documents.
 * The view schemas forbid undocumented fields, so a view function that adds or renames a field
 * without its schema fails here. Each resource is created twice, once with every optional
 * field set and once with none, so both sides of every nullable field are seen.
 */

const address = { line1: 'Bryggen 1', line2: 'Floor 2', city: 'Bergen', region: 'Vestland', postalCode: '5003', country: 'NO' }
const metadata = { source: 'web', campaign: 'spring' }

describe('documented response schemas match real answers of every route', () => {
  let app: TestApp
  let t: TestTenant
  let rx: Receiver
  let doc: any
  let routes: readonly RouteDef[]
  let check: ReturnType<typeof documentValidator>
  const exercised = new Set<string>()
  const ids: Record<string, string> = {}

  /** A request as the tenant (or without a key for public routes) whose answer must have the route's status and documented shape. */
  async function call(method: RouteDef['method'], path: string, url: string, body?: unknown, as?: TestSession): Promise<Reply> {
    const route = routes.find((r) => r.method === method && r.path === path)
    assert.ok(route, `no route ${method} ${path}`)
    const send = as ? as.request : route.scope === 'public' ? app.request : t.request
    const reply = await send(method, url, body === undefined ? {} : { body })
    const status = route.status ?? 200
    assert.equal(reply.status, status, `${method} ${url}: ${reply.text}`)
    check.response(method, path, status, reply.body)
    exercised.add(`${method} ${path}`)
    return reply
  }
  const create = async (path: string, body: unknown, url = path) => (await call('POST', path, url, body)).body.data
  const read = (path: string, url: string) => call('GET', path, url)

  before(async () => {
    // `/gone` answers 410: endpoint health disables that subscription, and the `*` one gets webhook.disabled.
    rx = await startReceiver({ respond: (req) => (req.url.startsWith('/gone') ? { status: 410 } : { status: 200, body: '{"ok":true}' }) })
    app = await startTestApp({ allowPrivateTargets: true, rateLimit: 100_000 })
    t = await app.tenant()
    routes = app.server.routes
    doc = (await app.request('GET', '/v1/openapi.json')).body
    check = documentValidator(doc)
  })
  after(async () => {
    await app.close()
    await rx.close()
  })

  test('every route but DELETE declares its response, and every documented object forbids undocumented fields', () => {
    for (const route of routes) {
      if (route.method === 'DELETE') continue
      if (route.eventStream) {
        // Server-Sent Events: text, described in words.
        const ok = doc.paths[route.path.replace(/:(\w+)/g, '{$1}')].get.responses['200'].content
        assert.deepEqual(Object.keys(ok), ['text/event-stream'], `${route.method} ${route.path}`)
        continue
      }
      assert.ok(route.response, `${route.method} ${route.path} declares no response schema`)
      const schema: any = successSchema(doc, route.method, route.path, route.status ?? 200)
      const data = route.raw ? schema : route.list ? schema.properties.data.items : schema.properties.data
      assert.notDeepEqual(data, { type: 'object' }, `${route.method} ${route.path}: data is a generic object`)
    }
    const views = Object.entries<any>(doc.components.schemas).filter(([name]) => name !== 'Error')
    assert.ok(views.length >= 12, `named views: ${views.map(([n]) => n)}`)
    for (const [name, schema] of views) {
      _objects(schema, name).forEach(([where, node]) => assert.equal(node.additionalProperties, false, `${where} allows undocumented fields`))
    }
  })

  test('the event payload has a branch for every event name, each carrying its resource view', () => {
    const branches = doc.components.schemas.Event.oneOf as any[]
    assert.deepEqual(branches.flatMap((b) => b.properties.event.enum).sort(), [...EVENT_NAMES].sort())
    for (const b of branches) {
      const resource = b.properties.event.enum[0].split('.')[0]
      assert.equal(b.properties.data.$ref.toLowerCase(), `#/components/schemas/${resource}`)
    }
  })

  test('system routes', async () => {
    await read('/health', '/health')
    await read('/v1/openapi.json', '/v1/openapi.json')
  })

  test('creates: every resource with every optional field set, and with none', async () => {
    rx.requests.length = 0
    ids.wh = (await create('/v1/webhooks', { url: `${rx.url}/hook`, events: ['*'], secret: 'a-long-random-secret', headers: { 'X-Env': 'test' } })).id
    ids.whDead = (await create('/v1/webhooks', { url: 'http://127.0.0.1:9/dead', events: ['order.created'], secret: 'a-long-random-secret' })).id
    ids.whGone = (await create('/v1/webhooks', { url: `${rx.url}/gone`, events: ['order.created'], secret: 'a-long-random-secret' })).id
    ids.cus = (await create('/v1/customers', { firstName: 'Ada', lastName: 'Lovelace', email: 'Ada@Example.com', phone: '+47 555 0100', address, notes: 'VIP', metadata })).id
    ids.cusMin = (await create('/v1/customers', { firstName: 'Bob', lastName: 'Smith', email: 'bob@example.com' })).id
    ids.prd = (await create('/v1/products', {
      name: 'Fjord cruise', description: 'All day', code: 'FJ-1', price: 149.5, currency: 'EUR', durationMinutes: 240, location: 'Bergen', capacity: 40, active: true, metadata,
    })).id
    ids.prdMin = (await create('/v1/products', { name: 'Walk', price: 0, currency: 'JPY' })).id
    ids.ord = (await create('/v1/orders', orderBody({
      customerId: ids.cus, customer: undefined, notes: 'Window seat', metadata,
      items: [{ productId: ids.prd, description: 'Fjord cruise', quantity: 2, unitPrice: 149.5 }, { description: 'Lunch', quantity: 1, unitPrice: 0 }],
    }))).id
    ids.ordMin = (await create('/v1/orders', orderBody({ travelDate: undefined }))).id
    ids.ordDel = (await create('/v1/orders', orderBody())).id
    ids.iti = (await create('/v1/itineraries', itineraryBody({ orderId: ids.ord, customerId: ids.cus, metadata }))).id
    ids.itiMin = (await create('/v1/itineraries', { title: 'Day trip', startDate: '2027-06-01', endDate: '2027-06-01' })).id
    ids.inv = (await create('/v1/invoices', invoiceBody({ orderId: ids.ord, customerId: ids.cus, metadata }))).id
    ids.invMin = (await create('/v1/invoices', { lines: [{ description: 'Deposit', quantity: 1, unitPrice: 100 }], currency: 'EUR' })).id
    ids.invPay = (await create('/v1/invoices', invoiceBody())).id
    ids.pay = (await create('/v1/payments', paymentBody({ orderId: ids.ord, invoiceId: ids.inv, reference: 'PSP-1', metadata }))).id
    ids.payMin = (await create('/v1/payments', paymentBody())).id
    ids.sup = (await create('/v1/suppliers', { name: 'Hotel Bryggen', type: 'hotel', email: 'Desk@Hotel.example', phone: '+47 555 0199', address, notes: 'Late check-in', metadata })).id
    ids.supMin = (await create('/v1/suppliers', { name: 'Bus', type: 'transport' })).id
    ids.inq = (await create('/v1/inquiries', {
      name: 'Eve', email: 'eve@example.com', phone: '+47 555 0111', message: 'Space in June?', productId: ids.prd, travelDate: '2027-06-01', travelers: 2, metadata,
    })).id
    ids.inqMin = (await create('/v1/inquiries', { name: 'Mo', email: 'mo@example.com', message: 'Hello' })).id
    ids.cnt = (await create('/v1/content/:entity', { slug: 'bergen', title: 'Bergen', body: '# Bergen', data: { lat: 60.39, tags: ['city'] }, status: 'published', metadata }, '/v1/content/destinations')).id
    ids.cntMin = (await create('/v1/content/:entity', { slug: 'oslo', title: 'Oslo' }, '/v1/content/destinations')).id
  })

  test('updates and actions answer the record', async () => {
    await call('PATCH', '/v1/orders/:id', `/v1/orders/${ids.ordMin}`, { notes: 'Late arrival', metadata: { a: 'b' } })
    await call('POST', '/v1/orders/:id/confirm', `/v1/orders/${ids.ord}/confirm`)
    await call('POST', '/v1/orders/:id/cancel', `/v1/orders/${ids.ordMin}/cancel`)
    await call('PATCH', '/v1/customers/:id', `/v1/customers/${ids.cusMin}`, { phone: '+47 555 0102', address })
    await call('PATCH', '/v1/products/:id', `/v1/products/${ids.prdMin}`, { active: false, capacity: 10 })
    await call('PATCH', '/v1/itineraries/:id', `/v1/itineraries/${ids.itiMin}`, { days: [{ day: 1, title: 'Walk', items: ['Meet at 9'] }] })
    await call('PATCH', '/v1/invoices/:id', `/v1/invoices/${ids.invMin}`, { dueDate: '2027-05-01' })
    await call('POST', '/v1/invoices/:id/pay', `/v1/invoices/${ids.invPay}/pay`)
    await call('POST', '/v1/payments/:id/refund', `/v1/payments/${ids.pay}/refund`, { amount: 10 })
    await call('PATCH', '/v1/suppliers/:id', `/v1/suppliers/${ids.supMin}`, { email: 'ops@bus.example' })
    await call('PATCH', '/v1/inquiries/:id', `/v1/inquiries/${ids.inq}`, { status: 'responded' })
    await call('PATCH', '/v1/content/:entity/:id', `/v1/content/destinations/${ids.cntMin}`, { status: 'published', data: { x: 1 } })
    await call('PATCH', '/v1/webhooks/:id', `/v1/webhooks/${ids.whDead}`, { headers: { 'X-A': 'b' } })
  })

  test('reads: every record alone and in its list', async () => {
    const pairs: [string, string[]][] = [
      ['/v1/orders', [ids.ord!, ids.ordMin!]], ['/v1/customers', [ids.cus!, ids.cusMin!]], ['/v1/products', [ids.prd!, ids.prdMin!]],
      ['/v1/itineraries', [ids.iti!, ids.itiMin!]], ['/v1/invoices', [ids.inv!, ids.invMin!, ids.invPay!]], ['/v1/payments', [ids.pay!, ids.payMin!]],
      ['/v1/suppliers', [ids.sup!, ids.supMin!]], ['/v1/inquiries', [ids.inq!, ids.inqMin!]], ['/v1/webhooks', [ids.wh!, ids.whDead!]],
    ]
    for (const [base, list] of pairs) {
      const page = await read(base, `${base}?limit=100`)
      assert.ok(list.every((id) => page.body.data.some((r: any) => r.id === id)), `${base} lists every record`)
      for (const id of list) await read(`${base}/:id`, `${base}/${id}`)
    }
    await read('/v1/content/:entity', '/v1/content/destinations?limit=100')
    for (const id of [ids.cnt, ids.cntMin]) await read('/v1/content/:entity/:id', `/v1/content/destinations/${id}`)
  })

  test('deliveries: list, each record with its attempt log, a retry, and the bodies receivers got', async () => {
    // Wait for the first attempts: one receiver that answers 200, one address that refuses.
    const done = async () => {
      const page = (await t.request('GET', '/v1/webhooks/deliveries?limit=100')).body
      return page.data.length > 0 && page.data.every((d: any) => d.status !== 'pending') && page
    }
    await until('every delivery attempted once', done)
    const page = await read('/v1/webhooks/deliveries', '/v1/webhooks/deliveries?limit=100')
    const deliveries: any[] = page.body.data
    assert.deepEqual(new Set(deliveries.map((d) => d.event)), new Set(EVENT_NAMES), 'every event name was sent, so every payload branch is checked')
    // The subscription that was answered 410, disabled: the other side of its nullable fields.
    assert.equal((await read('/v1/webhooks/:id', `/v1/webhooks/${ids.whGone}`)).body.data.disabled_reason, 'gone')
    const delivered = deliveries.find((d) => d.status === 'delivered')
    const failed = deliveries.find((d) => d.status === 'failed')
    assert.ok(delivered && failed, 'one delivered and one failed record')
    for (const d of [delivered, failed]) {
      const one = (await read('/v1/webhooks/deliveries/:id', `/v1/webhooks/deliveries/${d.id}`)).body.data
      assert.ok(one.attempt_log.length >= 1)
    }
    await call('POST', '/v1/webhooks/deliveries/:id/retry', `/v1/webhooks/deliveries/${delivered.id}/retry`)
    const test = await call('POST', '/v1/webhooks/:id/test', `/v1/webhooks/${delivered.webhook_id}/test`, {})
    check.component('Event', test.body.data.payload)
    const replay = await call('POST', '/v1/webhooks/deliveries/replay', '/v1/webhooks/deliveries/replay', { webhook_id: delivered.webhook_id, dry_run: true })
    assert.equal(replay.body.data.dry_run, true)
    const types = await read('/v1/webhooks/event-types', '/v1/webhooks/event-types')
    assert.deepEqual(types.body.data.map((e: { name: string }) => e.name), [...EVENT_NAMES])
    for (const e of types.body.data) check.component('Event', e.example)
    const stats = await read('/v1/webhooks/stats', '/v1/webhooks/stats?bucket=hour')
    assert.ok(stats.body.data.some((b: { attempts: number }) => b.attempts > 0))
    const received = await rx.waitFor(1)
    for (const r of received) check.component('Event', JSON.parse(r.body))
    // The events API: every event sent above (each name), and the test event with `test: true`.
    const events = (await read('/v1/events', '/v1/events?limit=100')).body.data as { id: string; event: string }[]
    assert.deepEqual(new Set(events.map((e) => e.event)), new Set(EVENT_NAMES))
    assert.equal((await read('/v1/events/:id', `/v1/events/${test.body.data.event_id}`)).body.data.test, true)
    const made = await read('/v1/webhooks/deliveries', `/v1/webhooks/deliveries?event_id=${delivered.event_id}`)
    assert.ok(made.body.data.some((d: { id: string }) => d.id === delivered.id))
    // The stream, resumed from before the oldest event: each message's data is the documented Event.
    const stream = await openStream(app.url, t.key, { query: `after=${events.at(-1)!.id}` })
    try {
      assert.equal(stream.status, 200)
      assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/)
      const message = await stream.next()
      assert.equal(message.id, events.at(-2)!.id)
      check.component('Event', JSON.parse(message.data))
      exercised.add('GET /v1/events/stream')
    } finally {
      await stream.close()
    }
  })

  test('API keys: create (with its secret), list, read, revoke', async () => {
    const created = (await call('POST', '/v1/keys', '/v1/keys', { name: 'docs', scopes: ['orders:read'], expires_in: '1h' })).body.data
    await read('/v1/keys', '/v1/keys')
    await read('/v1/keys/:id', `/v1/keys/${created.id}`)
    await call('DELETE', '/v1/keys/:id', `/v1/keys/${created.id}`)
  })

  test('dashboard: a link, signing in, the session, the operator\'s tenants, signing out', async () => {
    const link = (await call('POST', '/v1/dashboard/links', '/v1/dashboard/links', {})).body.data
    const token = new URL(link.url).hash.slice(1)
    const signedIn = await call('POST', '/v1/dashboard/sessions', '/v1/dashboard/sessions', { token })
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!
    const tenantSession: TestSession = {
      id: signedIn.body.data.id, cookie,
      request: (m, p, o = {}) => app.request(m, p, { ...o, headers: { cookie, 'x-requested-with': 'travelops-dashboard' } }),
    }
    await call('GET', '/v1/dashboard/session', '/v1/dashboard/session', undefined, tenantSession)
    const op = await app.session(null)
    const ten = await call('POST', '/v1/admin/tenants', '/v1/admin/tenants', { name: 'Docs tenant' }, op)
    await call('GET', '/v1/admin/tenants', '/v1/admin/tenants', undefined, op)
    await call('GET', '/v1/admin/tenants/:id', `/v1/admin/tenants/${ten.body.data.id}`, undefined, op)
    await call('DELETE', '/v1/dashboard/session', '/v1/dashboard/session', undefined, tenantSession)
  })

  test('deletes', async () => {
    await call('DELETE', '/v1/orders/:id', `/v1/orders/${ids.ordDel}`)
    await call('DELETE', '/v1/customers/:id', `/v1/customers/${ids.cusMin}`)
    await call('DELETE', '/v1/products/:id', `/v1/products/${ids.prdMin}`)
    await call('DELETE', '/v1/itineraries/:id', `/v1/itineraries/${ids.itiMin}`)
    await call('DELETE', '/v1/invoices/:id', `/v1/invoices/${ids.invMin}`)
    await call('DELETE', '/v1/suppliers/:id', `/v1/suppliers/${ids.supMin}`)
    await call('DELETE', '/v1/inquiries/:id', `/v1/inquiries/${ids.inqMin}`)
    await call('DELETE', '/v1/content/:entity/:id', `/v1/content/destinations/${ids.cntMin}`)
    await call('DELETE', '/v1/webhooks/:id', `/v1/webhooks/${ids.whDead}`)
  })

  test('every route of the registry was exercised above', () => {
    const missing = routes.map((r) => `${r.method} ${r.path}`).filter((key) => !exercised.has(key))
    assert.deepEqual(missing, [], 'routes whose real answer was not checked against the document')
  })
})

/** Every object schema with `properties` inside `node` (not following `$ref`), with where it is. */
function _objects(node: any, where: string, out: [string, any][] = []): [string, any][] {
  if (Array.isArray(node)) node.forEach((n, i) => _objects(n, `${where}[${i}]`, out))
  else if (node && typeof node === 'object') {
    if (node.properties) out.push([where, node])
    for (const [key, value] of Object.entries(node)) _objects(value, `${where}.${key}`, out)
  }
  return out
}
