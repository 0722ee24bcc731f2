import assert from 'node:assert/strict'
import { eventScenarios, hasPaths, isReadOnly, listAll, unknownId } from '../helpers/catalog.ts'
import type { Fixture } from '../helpers/scenario.ts'

interface F extends Fixture {
  a: any // tenant's customer, changed by the PATCH rows
  same: any // tenant's customer only ever sent no-op PATCHes
  gone: any // tenant's customer the DELETE rows remove
  b: any // the other tenant's customer
}

const body = (over: Record<string, unknown> = {}) => ({ firstName: 'Ada', lastName: 'Lovelace', email: 'Ada@Example.COM', ...over })
const address = { line1: 'Storgata 1', city: 'Oslo', country: 'NO' }
const ids = (r: { body: { data: { id: string }[] } }) => r.body.data.map((c) => c.id)

eventScenarios<F>('customers API', async (base) => {
  const make = async (t: typeof base.tenant, over: Record<string, unknown> = {}) => (await t.request('POST', '/v1/customers', { body: body(over) })).body.data
  return {
    ...base,
    a: await make(base.tenant, { email: 'a@example.com', phone: '+47 22 00 00 00', address }),
    same: await make(base.tenant, { email: 'same@example.com', notes: 'keep', metadata: { tier: 'gold' } }),
    gone: await make(base.tenant, { email: 'gone@example.com' }),
    b: await make(base.other, { email: 'b@example.com' }),
  }
}, [
  // create
  {
    name: 'minimal body; email lower-cased, optional fields null', method: 'POST', path: '/v1/customers', body: body(), status: 201,
    events: ['customer.created'],
    check: (r) => {
      const c = r.body.data
      assert.match(c.id, /^cus_[0-9a-f-]{36}$/)
      assert.deepEqual({ ...c, id: 0, createdAt: 0, updatedAt: 0 }, {
        id: 0, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: null, address: null, notes: null, metadata: {}, createdAt: 0, updatedAt: 0,
      })
      assert.match(c.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      assert.equal(c.updatedAt, c.createdAt)
    },
  },
  {
    name: 'every field; address parts not given are null', method: 'POST', path: '/v1/customers', status: 201, events: ['customer.created'],
    body: body({ phone: '+1 (555) 010-0000', address: { ...address, region: 'Oslo', line2: 'c/o B' }, notes: 'vegetarian', metadata: { crm: '42' } }),
    check: (r) => {
      assert.deepEqual(r.body.data.address, { line1: 'Storgata 1', line2: 'c/o B', city: 'Oslo', region: 'Oslo', postalCode: null, country: 'NO' })
      assert.equal(r.body.data.phone, '+1 (555) 010-0000')
      assert.deepEqual(r.body.data.metadata, { crm: '42' })
    },
  },
  { name: 'no key', method: 'POST', path: '/v1/customers', body: body(), as: 'anonymous', status: 401, code: 'unauthenticated' },
  {
    name: 'key without customers:write', method: 'POST', path: '/v1/customers', body: body(), as: 'unscoped', status: 403, code: 'forbidden',
    check: (r) => assert.match(r.body.error.message, /customers:write/),
  },
  { name: 'unknown field', method: 'POST', path: '/v1/customers', body: body({ nickname: 'A' }), status: 422, code: 'validation_failed', check: (r) => hasPaths(r, 'nickname') },
  { name: 'read-only id', method: 'POST', path: '/v1/customers', body: body({ id: unknownId('cus') }), status: 422, check: (r) => isReadOnly(r, 'id') },
  { name: 'read-only createdAt', method: 'POST', path: '/v1/customers', body: body({ createdAt: '2026-01-01T00:00:00.000Z' }), status: 422, check: (r) => isReadOnly(r, 'createdAt') },
  {
    name: 'wrong types and values, every one reported', method: 'POST', path: '/v1/customers', status: 422,
    body: { firstName: 5, lastName: '', email: 'not-an-email', phone: 'call me', notes: 7, metadata: { k: 1 } },
    check: (r) => hasPaths(r, 'firstName', 'lastName', 'email', 'phone', 'notes', 'metadata.k'),
  },
  { name: 'required fields missing', method: 'POST', path: '/v1/customers', body: {}, status: 422, check: (r) => hasPaths(r, 'firstName', 'lastName', 'email') },
  {
    name: 'address: unknown country, missing city, unknown part', method: 'POST', path: '/v1/customers', status: 422,
    body: body({ address: { line1: 'x', country: 'XX', zip: '1' } }), check: (r) => hasPaths(r, 'address.country', 'address.city', 'address.zip'),
  },
  { name: 'address country in lower case', method: 'POST', path: '/v1/customers', body: body({ address: { ...address, country: 'no' } }), status: 422, check: (r) => hasPaths(r, 'address.country') },
  { name: 'body is an array', method: 'POST', path: '/v1/customers', body: [body()], status: 422 },
  { name: 'malformed JSON', method: 'POST', path: '/v1/customers', raw: '{"firstName":', headers: { 'content-type': 'application/json' }, status: 400, code: 'bad_request' },

  // read
  { name: 'own customer', method: 'GET', path: (f) => `/v1/customers/${f.a.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.a) },
  { name: 'no key', method: 'GET', path: (f) => `/v1/customers/${f.a.id}`, as: 'anonymous', status: 401 },
  { name: 'key without customers:read', method: 'GET', path: (f) => `/v1/customers/${f.a.id}`, as: 'unscoped', status: 403, check: (r) => assert.match(r.body.error.message, /customers:read/) },
  { name: 'unknown id', method: 'GET', path: `/v1/customers/${unknownId('cus')}`, status: 404, code: 'not_found' },
  { name: 'malformed id', method: 'GET', path: '/v1/customers/cus_123', status: 404, code: 'not_found' },
  { name: 'id of another type', method: 'GET', path: `/v1/customers/${unknownId('prd')}`, status: 404 },
  { name: "another tenant's id", method: 'GET', path: (f) => `/v1/customers/${f.b.id}`, status: 404, code: 'not_found' },
  { name: 'other tenant reads ours', method: 'GET', path: (f) => `/v1/customers/${f.a.id}`, as: 'other', status: 404 },

  // list
  {
    name: 'own customers only, newest first', method: 'GET', path: '/v1/customers', status: 200,
    check: (r, f) => {
      const got = ids(r)
      assert.ok(got.includes(f.a.id) && got.includes(f.gone.id))
      assert.ok(!got.includes(f.b.id))
      assert.deepEqual(got, [...got].sort().reverse())
      assert.equal(r.body.has_more, false)
      assert.equal(r.body.next_cursor, null)
    },
  },
  { name: "other tenant's list never holds ours", method: 'GET', path: '/v1/customers', as: 'other', status: 200, check: (r, f) => assert.deepEqual(ids(r), [f.b.id]) },
  { name: 'email filter, case-insensitive', method: 'GET', path: '/v1/customers?email=A@EXAMPLE.com', status: 200, check: (r, f) => assert.deepEqual(ids(r), [f.a.id]) },
  { name: "email filter does not reach another tenant's", method: 'GET', path: '/v1/customers?email=b@example.com', status: 200, check: (r) => assert.deepEqual(r.body.data, []) },
  { name: 'email filter that is no email', method: 'GET', path: '/v1/customers?email=nope', status: 400, code: 'bad_request', check: (r) => hasPaths(r, 'email') },
  { name: 'unknown query parameter', method: 'GET', path: '/v1/customers?status=new', status: 400, code: 'bad_request', check: (r) => hasPaths(r, 'status') },
  { name: 'limit out of range', method: 'GET', path: '/v1/customers?limit=0', status: 400 },
  { name: 'garbage cursor', method: 'GET', path: '/v1/customers?cursor=abc', status: 400 },
  { name: 'list without scope', method: 'GET', path: '/v1/customers', as: 'unscoped', status: 403 },

  // update
  {
    name: 'change phone', method: 'PATCH', path: (f) => `/v1/customers/${f.a.id}`, body: { phone: '+47 99 99 99 99' }, status: 200, events: ['customer.updated'],
    check: (r, f) => {
      assert.deepEqual({ ...r.body.data, updatedAt: 0 }, { ...f.a, phone: '+47 99 99 99 99', updatedAt: 0 })
      assert.ok(r.body.data.updatedAt >= f.a.updatedAt)
    },
  },
  {
    name: 'null clears optional fields; email lower-cased', method: 'PATCH', path: (f) => `/v1/customers/${f.a.id}`, status: 200, events: ['customer.updated'],
    body: { phone: null, address: null, email: 'NEW@example.com' },
    check: (r) => {
      assert.equal(r.body.data.phone, null)
      assert.equal(r.body.data.address, null)
      assert.equal(r.body.data.email, 'new@example.com')
    },
  },
  {
    name: 'address given replaces the whole address', method: 'PATCH', path: (f) => `/v1/customers/${f.a.id}`, status: 200, events: ['customer.updated'],
    body: { address: { line1: 'Karl Johans gate 2', city: 'Oslo', postalCode: '0154', country: 'NO' } },
    check: (r) => assert.deepEqual(r.body.data.address, { line1: 'Karl Johans gate 2', line2: null, city: 'Oslo', region: null, postalCode: '0154', country: 'NO' }),
  },
  {
    name: 'same values again: nothing changes, no event', method: 'PATCH', path: (f) => `/v1/customers/${f.same.id}`, status: 200,
    body: { firstName: 'Ada', email: 'SAME@example.com', notes: 'keep', metadata: { tier: 'gold' }, phone: null, address: null },
    check: (r, f) => assert.deepEqual(r.body.data, f.same),
  },
  { name: 'empty body: no event', method: 'PATCH', path: (f) => `/v1/customers/${f.same.id}`, body: {}, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.same) },
  { name: 'null on a required field', method: 'PATCH', path: (f) => `/v1/customers/${f.same.id}`, body: { firstName: null }, status: 422, check: (r) => hasPaths(r, 'firstName') },
  { name: 'read-only id', method: 'PATCH', path: (f) => `/v1/customers/${f.same.id}`, body: { id: unknownId('cus') }, status: 422, check: (r) => isReadOnly(r, 'id') },
  { name: 'read-only updatedAt', method: 'PATCH', path: (f) => `/v1/customers/${f.same.id}`, body: { updatedAt: 'x' }, status: 422, check: (r) => isReadOnly(r, 'updatedAt') },
  { name: 'unknown field', method: 'PATCH', path: (f) => `/v1/customers/${f.same.id}`, body: { vip: true }, status: 422, check: (r) => hasPaths(r, 'vip') },
  { name: 'bad email', method: 'PATCH', path: (f) => `/v1/customers/${f.same.id}`, body: { email: 'x@' }, status: 422, check: (r) => hasPaths(r, 'email') },
  { name: 'unknown id', method: 'PATCH', path: `/v1/customers/${unknownId('cus')}`, body: { notes: 'x' }, status: 404 },
  { name: 'malformed id', method: 'PATCH', path: '/v1/customers/nope', body: { notes: 'x' }, status: 404 },
  { name: "another tenant's id", method: 'PATCH', path: (f) => `/v1/customers/${f.b.id}`, body: { notes: 'x' }, status: 404 },
  { name: 'other tenant patches ours', method: 'PATCH', path: (f) => `/v1/customers/${f.same.id}`, body: { notes: 'x' }, as: 'other', status: 404 },
  { name: 'no key', method: 'PATCH', path: (f) => `/v1/customers/${f.same.id}`, body: { notes: 'x' }, as: 'anonymous', status: 401 },
  { name: 'no scope', method: 'PATCH', path: (f) => `/v1/customers/${f.same.id}`, body: { notes: 'x' }, as: 'unscoped', status: 403 },
  { name: 'the refused patches changed nothing', method: 'GET', path: (f) => `/v1/customers/${f.same.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.same) },

  // delete
  { name: 'other tenant deletes ours', method: 'DELETE', path: (f) => `/v1/customers/${f.gone.id}`, as: 'other', status: 404 },
  { name: 'no key', method: 'DELETE', path: (f) => `/v1/customers/${f.gone.id}`, as: 'anonymous', status: 401 },
  { name: 'no scope', method: 'DELETE', path: (f) => `/v1/customers/${f.gone.id}`, as: 'unscoped', status: 403 },
  { name: "another tenant's id", method: 'DELETE', path: (f) => `/v1/customers/${f.b.id}`, status: 404 },
  { name: 'malformed id', method: 'DELETE', path: '/v1/customers/cus_', status: 404 },
  { name: 'own customer', method: 'DELETE', path: (f) => `/v1/customers/${f.gone.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body, { data: { id: f.gone.id, deleted: true } }) },
  { name: 'deleted one is gone', method: 'GET', path: (f) => `/v1/customers/${f.gone.id}`, status: 404 },
  { name: 'deleting twice', method: 'DELETE', path: (f) => `/v1/customers/${f.gone.id}`, status: 404 },
  { name: "other tenant's customer survived", method: 'GET', path: (f) => `/v1/customers/${f.b.id}`, as: 'other', status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.b) },
  { name: 'wrong method', method: 'PUT', path: (f) => `/v1/customers/${f.a.id}`, body: {}, status: 405, code: 'method_not_allowed' },
  {
    name: 'whole list by cursor', method: 'GET', path: '/v1/customers?limit=1', status: 200,
    check: async (r, f) => {
      assert.equal(r.body.has_more, true)
      const all = await listAll((p) => f.tenant.request('GET', p), '/v1/customers', 2)
      assert.ok(!all.some((c) => c.id === f.gone.id || c.id === f.b.id))
      assert.equal(new Set(all.map((c) => c.id)).size, all.length)
    },
  },
])
