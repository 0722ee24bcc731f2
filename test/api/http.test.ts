import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { revokeKey } from '../../src/modules/keys/service.ts'

describe('HTTP conventions', () => {
  let app: TestApp
  let t: TestTenant
  before(async () => {
    app = await startTestApp()
    t = await app.tenant()
  })
  after(() => app.close())

  test('health needs no key and every response carries X-Request-ID', async () => {
    const r = await app.request('GET', '/health')
    assert.equal(r.status, 200)
    assert.deepEqual(r.body, { status: 'ok' })
    assert.match(r.headers.get('x-request-id')!, /^req_[0-9a-f-]{36}$/)
    const missing = await app.request('GET', '/v1/nothing-here')
    assert.equal(missing.status, 404)
    assert.equal(missing.body.error.code, 'not_found')
    assert.equal(missing.body.error.request_id, missing.headers.get('x-request-id'))
  })

  test('a malformed percent-escape in the path is a 400 in the error shape', async () => {
    const r = await app.request('GET', '/v1/orders/%ZZ')
    assert.equal(r.status, 400)
    assert.equal(r.body.error.code, 'bad_request')
  })

  test('authenticated responses carry X-Tenant-ID and rate-limit headers, errors included', async () => {
    for (const [path, status] of [['/v1/orders', 200], ['/v1/orders/ord_00000000-0000-7000-8000-000000000000', 404]] as const) {
      const r = await t.request('GET', path)
      assert.equal(r.status, status)
      assert.equal(r.headers.get('x-tenant-id'), t.id)
      assert.equal(r.headers.get('x-ratelimit-limit'), '1000')
      assert.ok(Number(r.headers.get('x-ratelimit-remaining')) < 1000)
      assert.ok(Number(r.headers.get('x-ratelimit-reset')) > Date.now() / 1000)
    }
  })

  test('a 404 for an unknown route and a 405 under /v1 also carry X-Tenant-ID and the rate-limit headers of a valid key', async () => {
    const k = await t.newKey({ rateLimit: 50 })
    const remaining: number[] = []
    for (const [method, path, status] of [['GET', '/v1/nothing-here', 404], ['PUT', '/v1/orders', 405], ['GET', '/v1', 404]] as const) {
      const r = await t.request(method, path, { key: k.key })
      assert.equal(r.status, status, `${method} ${path}`)
      assert.equal(r.headers.get('x-tenant-id'), t.id, `${method} ${path}`)
      assert.equal(r.headers.get('x-ratelimit-limit'), '50')
      assert.ok(Number(r.headers.get('x-ratelimit-reset')) > Date.now() / 1000)
      remaining.push(Number(r.headers.get('x-ratelimit-remaining')))
      if (status === 405) assert.equal(r.headers.get('allow'), 'GET, HEAD, POST')
    }
    assert.deepEqual(remaining, [49, 48, 47], 'each is counted')
    const one = await t.newKey({ rateLimit: 1 })
    assert.equal((await t.request('GET', '/v1/nothing-here', { key: one.key })).status, 404)
    const over = await t.request('GET', '/v1/nothing-here', { key: one.key })
    assert.equal(over.status, 429)
    assert.equal(over.body.error.code, 'rate_limited')
    assert.ok(Number(over.headers.get('retry-after')) >= 1)
    // Without a valid key nothing changes: still 404/405, no tenant.
    for (const key of [null, 'tok_' + 'x'.repeat(32)]) {
      const r = await t.request('PUT', '/v1/orders', { key })
      assert.equal(r.status, 405)
      assert.equal(r.headers.get('x-tenant-id'), null)
      assert.equal((await t.request('GET', '/v1/nothing-here', { key })).status, 404)
    }
  })

  test('a revoked or expired key is 401', async () => {
    const k = await t.newKey()
    assert.equal((await t.request('GET', '/v1/orders', { key: k.key })).status, 200)
    await revokeKey(app.server.deps.engine, k.id, new Date())
    const r = await t.request('GET', '/v1/orders', { key: k.key })
    assert.equal(r.status, 401)
    assert.match(r.body.error.message, /revoked/)
    const expired = await t.newKey({ expiresAt: new Date(Date.now() - 1000) })
    assert.equal((await t.request('GET', '/v1/orders', { key: expired.key })).status, 401)
    assert.equal((await t.request('GET', '/v1/orders', { key: 'Basic abc' })).status, 401)
    const malformed = await app.request('GET', '/v1/orders', { headers: { authorization: 'Token xyz' } })
    assert.equal(malformed.status, 401)
  })

  test('scopes: read does not grant write, write grants read, resource:* grants both', async () => {
    const read = await t.newKey({ scopes: ['orders:read'] })
    assert.equal((await t.request('GET', '/v1/orders', { key: read.key })).status, 200)
    assert.equal((await t.request('POST', '/v1/orders', { key: read.key, body: orderBody() })).status, 403)
    const write = await t.newKey({ scopes: ['orders:write'] })
    assert.equal((await t.request('GET', '/v1/orders', { key: write.key })).status, 200)
    assert.equal((await t.request('POST', '/v1/orders', { key: write.key, body: orderBody() })).status, 201)
    const star = await t.newKey({ scopes: ['orders:*'] })
    assert.equal((await t.request('POST', '/v1/orders', { key: star.key, body: orderBody() })).status, 201)
  })

  test('JSON nested deeper than 100 levels is a 400, never a 500; 100 levels are fine', async () => {
    const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
    const content = (depth: number) => `{"slug":"deep-${depth}","title":"t","data":${nested(depth)}}`
    const ok = await t.request('POST', '/v1/content/pages', { raw: content(99), headers: { 'content-type': 'application/json' } })
    assert.equal(ok.status, 201, ok.text)
    for (const raw of [content(100), `{"metadata":${'['.repeat(200_000)}${']'.repeat(200_000)}}`, '['.repeat(100_000) + ']'.repeat(100_000)]) {
      for (const path of ['/v1/content/pages', '/v1/customers']) {
        const r = await t.request('POST', path, { raw, headers: { 'content-type': 'application/json' } })
        assert.equal(r.status, 400, `${path} ${raw.slice(0, 30)}…: ${r.text}`)
        assert.equal(r.body.error.code, 'bad_request')
      }
    }
  })

  test('a string with a lone surrogate escape (\\ud800) is a 422 at its path (§16); a real pair is stored and read back as sent', async () => {
    const json = { 'content-type': 'application/json' }
    for (const [raw, path] of [['{"firstName":"\\ud800x","lastName":"B","email":"a@b.co"}', 'firstName'], ['{"firstName":"A","lastName":"B","email":"a@b.co","metadata":{"\\udfff":"v"}}', 'metadata.\udfff']]) {
      const r = await t.request('POST', '/v1/customers', { raw: raw!, headers: json })
      assert.equal(r.status, 422, `${raw}: ${r.text}`)
      assert.equal(r.body.error.details[0].path, path)
    }
    const ok = await t.request('POST', '/v1/customers', { raw: '{"firstName":"\\ud83d\\ude00","lastName":"B","email":"a@b.co"}', headers: json })
    assert.equal(ok.status, 201, ok.text)
    assert.equal(ok.body.data.firstName, '\u{1F600}')
    assert.deepEqual((await t.request('GET', `/v1/customers/${ok.body.data.id}`)).body.data, ok.body.data)
  })

  test('a JSON array where an object belongs is a 422 at its path, never read as an object', async () => {
    const order = (await t.request('POST', '/v1/orders', { body: orderBody() })).body.data
    const customer = (await t.request('POST', '/v1/customers', { body: { firstName: 'A', lastName: 'B', email: 'a@b.co' } })).body.data
    const cases: [string, string, unknown, string][] = [
      ['POST', `/v1/orders/${order.id}/confirm`, [], ''],
      ['PATCH', `/v1/customers/${customer.id}`, [], ''],
      ['PATCH', `/v1/customers/${customer.id}`, { metadata: ['a', 'b'] }, 'metadata'],
      ['POST', '/v1/customers', { firstName: 'A', lastName: 'B', email: 'a@b.co', address: [] }, 'address'],
      ['POST', '/v1/webhooks', { url: 'https://example.com/h', events: ['*'], secret: 'x'.repeat(16), headers: ['v'] }, 'headers'],
      ['POST', '/v1/orders', orderBody({ items: [{ description: 'x', quantity: 1, unitPrice: 1 }, []] }), 'items[1]'],
    ]
    for (const [method, path, body, at] of cases) {
      const r = await t.request(method, path, { body })
      assert.equal(r.status, 422, `${method} ${path} ${JSON.stringify(body)}: ${r.text}`)
      assert.equal(r.body.error.code, 'validation_failed')
      assert.ok(r.body.error.details.some((d: { path: string }) => d.path === at), `detail at '${at}': ${r.text}`)
    }
    assert.equal((await t.request('GET', `/v1/orders/${order.id}`)).body.data.status, 'pending', 'the action did not run')
    assert.deepEqual((await t.request('GET', `/v1/customers/${customer.id}`)).body.data.metadata, {})
    assert.equal((await t.request('GET', '/v1/webhooks')).body.data.length, 0)
  })

  test('field names that are also Object.prototype names are unknown fields with their path; metadata keeps no silent holes', async () => {
    const person = '"firstName":"A","lastName":"B","email":"a@b.co"'
    const cases: [string, string][] = [
      [`{${person},"constructor":1}`, 'constructor'],
      [`{${person},"__proto__":{"x":1}}`, '__proto__'],
      [`{${person},"address":{"line1":"x","city":"Oslo","country":"NO","toString":"y"}}`, 'address.toString'],
      [`{${person},"metadata":{"constructor":"y","a":"b"}}`, 'metadata.constructor'],
      [`{${person},"metadata":{"__proto__":"y"}}`, 'metadata.__proto__'],
    ]
    for (const [raw, at] of cases) {
      const r = await t.request('POST', '/v1/customers', { raw, headers: { 'content-type': 'application/json' } })
      assert.equal(r.status, 422, `${raw}: ${r.text}`)
      assert.deepEqual(r.body.error.details.map((d: { path: string }) => d.path), [at], raw)
    }
  })
})

describe('rate limits', () => {
  let app: TestApp
  before(async () => {
    app = await startTestApp({ rateLimit: 3 })
  })
  after(() => app.close())

  test('a key limited to 5 gets 429 with Retry-After on the 6th call; headers right on every call', async () => {
    const t = await app.tenant()
    const k = await t.newKey({ rateLimit: 5 })
    for (let i = 1; i <= 6; i++) {
      const r = await t.request('GET', '/v1/orders', { key: k.key })
      assert.equal(r.headers.get('x-ratelimit-limit'), '5')
      assert.equal(r.headers.get('x-ratelimit-remaining'), String(Math.max(0, 5 - i)))
      const reset = Number(r.headers.get('x-ratelimit-reset'))
      assert.equal(reset % 3600, 0, 'fixed one-hour windows')
      if (i <= 5) assert.equal(r.status, 200)
      else {
        assert.equal(r.status, 429)
        assert.equal(r.body.error.code, 'rate_limited')
        const retryAfter = Number(r.headers.get('retry-after'))
        assert.ok(retryAfter >= 1 && retryAfter <= 3600)
        assert.ok(Math.abs(Date.now() / 1000 + retryAfter - reset) <= 2)
      }
    }
    // Other keys have their own windows; a key without its own limit follows the server default (3).
    const r = await t.request('GET', '/v1/orders')
    assert.equal(r.status, 200)
    assert.equal(r.headers.get('x-ratelimit-limit'), '3')
  })
})

describe('Idempotency-Key', () => {
  let app: TestApp
  let t: TestTenant
  before(async () => {
    app = await startTestApp()
    t = await app.tenant()
  })
  after(() => app.close())

  test('a repeat with the same key and body replays the stored response with no second effect', async () => {
    const headers = { 'idempotency-key': 'order-abc-1' }
    const first = await t.request('POST', '/v1/orders', { body: orderBody(), headers })
    assert.equal(first.status, 201)
    assert.equal(first.headers.get('idempotent-replayed'), null)
    const again = await t.request('POST', '/v1/orders', { body: orderBody(), headers })
    assert.equal(again.status, 201)
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    assert.equal(again.text, first.text)
    const list = await t.request('GET', '/v1/orders')
    assert.equal(list.body.data.length, 1)
    const events = await app.server.deps.db.selectFrom('events').selectAll().where('tenant_id', '=', t.id).execute()
    assert.equal(events.length, 1)
  })

  test('the same key with another body or path is 409 idempotency_conflict', async () => {
    const headers = { 'idempotency-key': 'order-abc-2' }
    assert.equal((await t.request('POST', '/v1/orders', { body: orderBody(), headers })).status, 201)
    const other = await t.request('POST', '/v1/orders', { body: orderBody({ notes: 'different' }), headers })
    assert.equal(other.status, 409)
    assert.equal(other.body.error.code, 'idempotency_conflict')
    const order = (await t.request('GET', '/v1/orders')).body.data[0].id
    const path = await t.request('POST', `/v1/orders/${order}/confirm`, { headers })
    assert.equal(path.status, 409)
    assert.equal(path.body.error.code, 'idempotency_conflict')
  })

  test('the conflict is found before the body is validated: another path or body is 409 even when it would be a 422', async () => {
    const headers = { 'idempotency-key': 'order-abc-3' }
    assert.equal((await t.request('POST', '/v1/orders', { body: orderBody(), headers })).status, 201)
    // The order's body is no customer, and {} is no order: the key's mismatch is what the client must hear.
    for (const [path, body] of [['/v1/customers', orderBody()], ['/v1/orders', {}], ['/v1/orders', orderBody({ total: 1 })]] as const) {
      const r = await t.request('POST', path, { body, headers })
      assert.equal(r.status, 409, `${path} ${JSON.stringify(body).slice(0, 40)}: ${r.text}`)
      assert.equal(r.body.error.code, 'idempotency_conflict')
    }
    const customers = await t.request('GET', '/v1/customers')
    assert.equal(customers.body.data.length, 0)
  })

  test('keys are per API key, and a stored 409 is replayed as 409', async () => {
    const other = await t.newKey()
    const headers = { 'idempotency-key': 'order-abc-1' }
    assert.equal((await t.request('POST', '/v1/orders', { key: other.key, body: orderBody(), headers })).status, 201)
    const order = (await t.request('POST', '/v1/orders', { body: orderBody() })).body.data.id
    await t.request('POST', `/v1/orders/${order}/cancel`)
    const h = { 'idempotency-key': 'cancel-twice' }
    const a = await t.request('POST', `/v1/orders/${order}/cancel`, { headers: h })
    const b = await t.request('POST', `/v1/orders/${order}/cancel`, { headers: h })
    assert.equal(a.status, 409)
    assert.equal(b.status, 409)
    assert.equal(b.text, a.text)
    assert.equal(b.headers.get('idempotent-replayed'), 'true')
  })

  test('an unusable Idempotency-Key is a 400', async () => {
    const r = await t.request('POST', '/v1/orders', { body: orderBody(), headers: { 'idempotency-key': 'x'.repeat(300) } })
    assert.equal(r.status, 400)
  })
})
