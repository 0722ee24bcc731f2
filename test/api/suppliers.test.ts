import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startTestApp } from '../helpers/app.ts'
import { eventScenarios, hasPaths, isReadOnly, unknownId } from '../helpers/catalog.ts'
import type { Fixture } from '../helpers/scenario.ts'

interface F extends Fixture {
  a: any
  same: any
  gone: any
  b: any
}

const body = (over: Record<string, unknown> = {}) => ({ name: 'Hotel Norge', type: 'hotel', ...over })
const ids = (r: { body: { data: { id: string }[] } }) => r.body.data.map((c) => c.id)

// Suppliers emit no events: every row below also proves that nothing reached the outbox.
// The scenario fixture's "unscoped" key holds suppliers:read, so its 403 rows are writes;
// the read 403 is the separate test at the end.
eventScenarios<F>('suppliers API', async (base) => {
  const make = async (t: typeof base.tenant, over: Record<string, unknown> = {}) => (await t.request('POST', '/v1/suppliers', { body: body(over) })).body.data
  return {
    ...base,
    a: await make(base.tenant, { email: 'desk@hotel.example', address: { line1: 'Torget 1', city: 'Bergen', country: 'NO' } }),
    same: await make(base.tenant, { type: 'guide', name: 'Kari', phone: '+47 400 00 000' }),
    gone: await make(base.tenant, { type: 'other' }),
    b: await make(base.other, { type: 'transport' }),
  }
}, [
  {
    name: 'minimal body', method: 'POST', path: '/v1/suppliers', body: body(), status: 201,
    check: (r) => {
      assert.match(r.body.data.id, /^sup_[0-9a-f-]{36}$/)
      assert.deepEqual({ ...r.body.data, id: 0, createdAt: 0, updatedAt: 0 }, {
        id: 0, name: 'Hotel Norge', type: 'hotel', email: null, phone: null, address: null, notes: null, metadata: {}, createdAt: 0, updatedAt: 0,
      })
    },
  },
  ...(['transport', 'guide', 'activity', 'other'] as const).map((type) => ({
    name: `type ${type}`, method: 'POST', path: '/v1/suppliers', body: body({ type }), status: 201,
    check: (r: any) => assert.equal(r.body.data.type, type),
  })),
  {
    name: 'every field; email lower-cased', method: 'POST', path: '/v1/suppliers', status: 201,
    body: body({ email: 'Desk@Hotel.Example', phone: '+47 55 00 00 00', address: { line1: 'Bryggen 1', city: 'Bergen', postalCode: '5003', country: 'NO' }, notes: 'net 30', metadata: { erp: 'S-1' } }),
    check: (r) => {
      assert.equal(r.body.data.email, 'desk@hotel.example')
      assert.deepEqual(r.body.data.address, { line1: 'Bryggen 1', line2: null, city: 'Bergen', region: null, postalCode: '5003', country: 'NO' })
    },
  },
  { name: 'unknown type', method: 'POST', path: '/v1/suppliers', body: body({ type: 'airline' }), status: 422, check: (r) => hasPaths(r, 'type') },
  { name: 'missing type and name', method: 'POST', path: '/v1/suppliers', body: {}, status: 422, check: (r) => hasPaths(r, 'type', 'name') },
  { name: 'bad email, address not an object', method: 'POST', path: '/v1/suppliers', body: body({ email: 'x', address: 'Bergen' }), status: 422, check: (r) => hasPaths(r, 'email', 'address') },
  { name: 'unknown field', method: 'POST', path: '/v1/suppliers', body: body({ rating: 5 }), status: 422, check: (r) => hasPaths(r, 'rating') },
  { name: 'read-only id', method: 'POST', path: '/v1/suppliers', body: body({ id: 'sup_1' }), status: 422, check: (r) => isReadOnly(r, 'id') },
  { name: 'no key', method: 'POST', path: '/v1/suppliers', body: body(), as: 'anonymous', status: 401 },
  { name: 'read-only key cannot write', method: 'POST', path: '/v1/suppliers', body: body(), as: 'unscoped', status: 403, check: (r) => assert.match(r.body.error.message, /suppliers:write/) },

  { name: 'own supplier', method: 'GET', path: (f) => `/v1/suppliers/${f.a.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.a) },
  { name: 'unknown id', method: 'GET', path: `/v1/suppliers/${unknownId('sup')}`, status: 404 },
  { name: 'malformed id', method: 'GET', path: '/v1/suppliers/sup_zz', status: 404 },
  { name: "another tenant's id", method: 'GET', path: (f) => `/v1/suppliers/${f.b.id}`, status: 404 },
  { name: 'other tenant reads ours', method: 'GET', path: (f) => `/v1/suppliers/${f.a.id}`, as: 'other', status: 404 },
  { name: 'no key', method: 'GET', path: '/v1/suppliers', as: 'anonymous', status: 401 },
  {
    name: 'own suppliers only, newest first', method: 'GET', path: '/v1/suppliers', status: 200,
    check: (r, f) => {
      const got = ids(r)
      assert.ok([f.a.id, f.same.id, f.gone.id].every((id) => got.includes(id)) && !got.includes(f.b.id))
      assert.deepEqual(got, [...got].sort().reverse())
    },
  },
  { name: "other tenant's list never holds ours", method: 'GET', path: '/v1/suppliers', as: 'other', status: 200, check: (r, f) => assert.deepEqual(ids(r), [f.b.id]) },
  { name: 'no filters exist', method: 'GET', path: '/v1/suppliers?type=hotel', status: 400, check: (r) => hasPaths(r, 'type') },
  { name: 'bad limit', method: 'GET', path: '/v1/suppliers?limit=abc', status: 400 },

  {
    name: 'change type and clear email', method: 'PATCH', path: (f) => `/v1/suppliers/${f.a.id}`, body: { type: 'activity', email: null }, status: 200,
    check: (r, f) => assert.deepEqual({ ...r.body.data, updatedAt: 0 }, { ...f.a, type: 'activity', email: null, updatedAt: 0 }),
  },
  { name: 'same values: unchanged', method: 'PATCH', path: (f) => `/v1/suppliers/${f.same.id}`, body: { type: 'guide', name: 'Kari', email: null }, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.same) },
  { name: 'null type', method: 'PATCH', path: (f) => `/v1/suppliers/${f.same.id}`, body: { type: null }, status: 422, check: (r) => hasPaths(r, 'type') },
  { name: 'read-only createdAt', method: 'PATCH', path: (f) => `/v1/suppliers/${f.same.id}`, body: { createdAt: 'x' }, status: 422, check: (r) => isReadOnly(r, 'createdAt') },
  { name: 'unknown id', method: 'PATCH', path: `/v1/suppliers/${unknownId('sup')}`, body: { name: 'x' }, status: 404 },
  { name: "another tenant's id", method: 'PATCH', path: (f) => `/v1/suppliers/${f.b.id}`, body: { name: 'x' }, status: 404 },
  { name: 'other tenant patches ours', method: 'PATCH', path: (f) => `/v1/suppliers/${f.same.id}`, body: { name: 'x' }, as: 'other', status: 404 },
  { name: 'read-only key cannot patch', method: 'PATCH', path: (f) => `/v1/suppliers/${f.same.id}`, body: { name: 'x' }, as: 'unscoped', status: 403 },
  { name: 'refused patches changed nothing', method: 'GET', path: (f) => `/v1/suppliers/${f.same.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.same) },

  { name: 'other tenant deletes ours', method: 'DELETE', path: (f) => `/v1/suppliers/${f.gone.id}`, as: 'other', status: 404 },
  { name: 'read-only key cannot delete', method: 'DELETE', path: (f) => `/v1/suppliers/${f.gone.id}`, as: 'unscoped', status: 403 },
  { name: 'own supplier', method: 'DELETE', path: (f) => `/v1/suppliers/${f.gone.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body, { data: { id: f.gone.id, deleted: true } }) },
  { name: 'deleted one is gone', method: 'GET', path: (f) => `/v1/suppliers/${f.gone.id}`, status: 404 },
  { name: "another tenant's id", method: 'DELETE', path: (f) => `/v1/suppliers/${f.b.id}`, status: 404 },
])

test('suppliers: a key without suppliers scopes gets 403 on reads', async () => {
  const app = await startTestApp()
  try {
    const t = await app.tenant()
    const { key } = await t.newKey({ scopes: ['products:*'] })
    const created = await t.request('POST', '/v1/suppliers', { body: body() })
    for (const path of ['/v1/suppliers', `/v1/suppliers/${created.body.data.id}`]) {
      const r = await t.request('GET', path, { key })
      assert.equal(r.status, 403)
      assert.match(r.body.error.message, /suppliers:read/)
    }
  } finally {
    await app.close()
  }
})
