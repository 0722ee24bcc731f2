import assert from 'node:assert/strict'
import { orderBody, type Reply } from '../helpers/app.ts'
import { scenarios, type Fixture } from '../helpers/scenario.ts'

interface F extends Fixture {
  pending: string
  confirmed: string
  cancelled: string
  foreign: string
}

const create = async (t: Fixture['tenant'], over = {}) => {
  const r = await t.request('POST', '/v1/orders', { body: orderBody(over) })
  assert.equal(r.status, 201, r.text)
  return r.body.data.id as string
}

scenarios<F>('orders', async (base) => {
  const pending = await create(base.tenant)
  const confirmed = await create(base.tenant)
  assert.equal((await base.tenant.request('POST', `/v1/orders/${confirmed}/confirm`)).status, 200)
  const cancelled = await create(base.tenant)
  assert.equal((await base.tenant.request('POST', `/v1/orders/${cancelled}/cancel`)).status, 200)
  const foreign = await create(base.other)
  return { ...base, pending, confirmed, cancelled, foreign }
}, [
  // 2xx
  { name: 'create', method: 'POST', path: '/v1/orders', body: orderBody(), status: 201, check: (r) => {
    const o = r.body.data
    assert.match(o.id, /^ord_[0-9a-f-]{36}$/)
    assert.match(o.orderNumber, /^ORD-\d{6}$/)
    assert.equal(o.status, 'pending')
    assert.equal(o.total, 299)
    assert.deepEqual(o.items[0], { productId: null, description: 'Fjord cruise', quantity: 2, unitPrice: 149.5, total: 299 })
    assert.match(o.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  } },
  { name: 'the customer email is stored in lower case, like customers\' emails', method: 'POST', path: '/v1/orders',
    body: orderBody({ customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'Ada@Example.COM' } }), status: 201,
    check: (r) => assert.equal(r.body.data.customer.email, 'ada@example.com') },
  { name: 'list newest first', method: 'GET', path: '/v1/orders', status: 200, check: (r, f) => {
    assert.equal(r.body.has_more, false)
    assert.equal(r.body.next_cursor, null)
    const ids = r.body.data.map((o: { id: string }) => o.id)
    assert.ok(ids.indexOf(f.cancelled) < ids.indexOf(f.pending))
    assert.ok(!ids.includes(f.foreign))
  } },
  { name: 'filter by status', method: 'GET', path: '/v1/orders?status=confirmed', status: 200, check: (r, f) => {
    assert.deepEqual(r.body.data.map((o: { id: string }) => o.id), [f.confirmed])
  } },
  { name: 'filter by createdBefore', method: 'GET', path: '/v1/orders?createdBefore=2000-01-01T00:00:00Z', status: 200, check: (r) => {
    assert.deepEqual(r.body.data, [])
  } },
  { name: 'read', method: 'GET', path: (f) => `/v1/orders/${f.pending}`, status: 200, check: (r, f) => assert.equal(r.body.data.id, f.pending) },
  { name: 'patch notes', method: 'PATCH', path: (f) => `/v1/orders/${f.pending}`, body: { notes: 'window seat', metadata: { ref: 'A1' } }, status: 200, check: (r) => {
    assert.equal(r.body.data.notes, 'window seat')
    assert.deepEqual(r.body.data.metadata, { ref: 'A1' })
  } },
  { name: 'patch status confirmed → completed', method: 'PATCH', path: (f) => `/v1/orders/${f.confirmed}`, body: { status: 'completed' }, status: 200, check: (r) => assert.equal(r.body.data.status, 'completed') },
  { name: 'action body {} is accepted', method: 'POST', path: (f) => `/v1/orders/${f.pending}/cancel`, body: {}, status: 200, check: (r) => assert.equal(r.body.data.status, 'cancelled') },
  { name: 'delete', method: 'DELETE', path: (f) => `/v1/orders/${f.cancelled}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, { id: f.cancelled, deleted: true }) },
  // 400
  { name: 'unknown query parameter', method: 'GET', path: '/v1/orders?colour=red', status: 400, code: 'bad_request', check: (r) => assert.equal(r.body.error.details[0].path, 'colour') },
  ...['constructor', '__proto__', 'toString'].map((name) => ({
    name: `query parameter named like an Object.prototype member: ${name}`, method: 'GET', path: `/v1/orders?${name}=1`, status: 400, code: 'bad_request',
    check: (r: Reply) => assert.deepEqual(r.body.error.details, [{ path: name, message: `unknown query parameter '${name}'` }]),
  })),
  { name: 'bad status filter', method: 'GET', path: '/v1/orders?status=shipped', status: 400, code: 'bad_request' },
  { name: 'limit out of range', method: 'GET', path: '/v1/orders?limit=101', status: 400, code: 'bad_request' },
  { name: 'garbage cursor', method: 'GET', path: '/v1/orders?cursor=%%%', status: 400, code: 'bad_request' },
  { name: 'malformed JSON', method: 'POST', path: '/v1/orders', raw: '{"items": [', headers: { 'content-type': 'application/json' }, status: 400, code: 'bad_request' },
  // 401 / 403
  { name: 'no key', method: 'GET', path: '/v1/orders', as: 'anonymous', status: 401, code: 'unauthenticated' },
  { name: 'key without orders scope', method: 'POST', path: '/v1/orders', body: orderBody(), as: 'unscoped', status: 403, code: 'forbidden', check: (r) => assert.match(r.body.error.message, /orders:write/) },
  // 404
  { name: 'unknown id', method: 'GET', path: '/v1/orders/ord_00000000-0000-7000-8000-000000000000', status: 404, code: 'not_found' },
  { name: 'malformed id', method: 'GET', path: '/v1/orders/42', status: 404, code: 'not_found' },
  { name: 'another tenant\'s order', method: 'GET', path: (f) => `/v1/orders/${f.foreign}`, status: 404, code: 'not_found' },
  { name: 'another tenant\'s order (patch)', method: 'PATCH', path: (f) => `/v1/orders/${f.foreign}`, body: { notes: 'x' }, status: 404 },
  { name: 'another tenant\'s order (delete)', method: 'DELETE', path: (f) => `/v1/orders/${f.foreign}`, status: 404 },
  { name: 'another tenant\'s order (confirm)', method: 'POST', path: (f) => `/v1/orders/${f.foreign}/confirm`, status: 404 },
  // 405
  { name: 'PUT on a known path', method: 'PUT', path: '/v1/orders', status: 405, code: 'method_not_allowed', check: (r) => assert.equal(r.headers.get('allow'), 'GET, HEAD, POST') },
  // 409
  { name: 'confirm twice', method: 'POST', path: (f) => `/v1/orders/${f.confirmed}/confirm`, status: 409, code: 'conflict' },
  { name: 'patch a terminal order\'s items', method: 'PATCH', path: (f) => `/v1/orders/${f.confirmed}`, body: { items: [{ description: 'x', quantity: 1, unitPrice: 1 }] }, status: 409, code: 'conflict' },
  // 415 / 413
  { name: 'wrong content type', method: 'POST', path: '/v1/orders', raw: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415, code: 'unsupported_media_type' },
  { name: 'body over 1 MiB', method: 'POST', path: '/v1/orders', raw: JSON.stringify({ notes: 'x'.repeat(1024 * 1024) }), headers: { 'content-type': 'application/json' }, status: 413, code: 'payload_too_large' },
  // 422
  { name: 'unknown and read-only fields', method: 'POST', path: '/v1/orders', body: orderBody({ colour: 'red', total: 5, orderNumber: 'X' }), status: 422, code: 'validation_failed', check: (r) => {
    const byPath = Object.fromEntries(r.body.error.details.map((d: { path: string; message: string }) => [d.path, d.message]))
    assert.match(byPath.colour, /unknown field/)
    assert.match(byPath.total, /read-only/)
    assert.match(byPath.orderNumber, /read-only/)
  } },
  { name: 'nested paths', method: 'POST', path: '/v1/orders', body: orderBody({ customer: { firstName: 'A', lastName: 'B', email: 'nope' }, items: [{ description: 'a', quantity: 1, unitPrice: 1 }, { description: 'b', quantity: 0, unitPrice: 1, total: 3 }] }), status: 422, check: (r) => {
    const paths = r.body.error.details.map((d: { path: string }) => d.path).sort()
    assert.deepEqual(paths, ['customer.email', 'items[1].quantity', 'items[1].total'])
  } },
  { name: 'too many decimals for the currency', method: 'POST', path: '/v1/orders', body: orderBody({ currency: 'JPY', items: [{ description: 'a', quantity: 1, unitPrice: 100.5 }] }), status: 422, check: (r) => assert.equal(r.body.error.details[0].path, 'items[0].unitPrice') },
  { name: 'unknown currency', method: 'POST', path: '/v1/orders', body: orderBody({ currency: 'EURO' }), status: 422, check: (r) => assert.equal(r.body.error.details[0].path, 'currency') },
  { name: 'impossible date', method: 'POST', path: '/v1/orders', body: orderBody({ travelDate: '2027-02-30' }), status: 422, check: (r) => assert.equal(r.body.error.details[0].path, 'travelDate') },
  { name: 'no items', method: 'POST', path: '/v1/orders', body: orderBody({ items: [] }), status: 422 },
  { name: 'body is an array', method: 'POST', path: '/v1/orders', body: [1, 2], status: 422 },
  { name: 'no body on create', method: 'POST', path: '/v1/orders', status: 422 },
  { name: 'action with a body', method: 'POST', path: (f) => `/v1/orders/${f.pending}/confirm`, body: { force: true }, status: 422 },
  { name: 'patch read-only total', method: 'PATCH', path: (f) => `/v1/orders/${f.pending}`, body: { total: 1 }, status: 422, check: (r) => assert.match(r.body.error.details[0].message, /read-only/) },
  { name: 'patch unknown status', method: 'PATCH', path: (f) => `/v1/orders/${f.pending}`, body: { status: 'shipped' }, status: 422 },
])
