import assert from 'node:assert/strict'
import { eventScenarios, hasPaths, isReadOnly, unknownId } from '../helpers/catalog.ts'
import type { Fixture } from '../helpers/scenario.ts'

interface F extends Fixture {
  a: any // tenant's product (code FJORD-1), changed by the PATCH rows
  same: any // tenant's product only ever sent no-op or refused PATCHes
  gone: any // tenant's product the DELETE rows remove
  b: any // the other tenant's product (code OTHER-1)
}

const body = (over: Record<string, unknown> = {}) => ({ name: 'Fjord cruise', price: 149.5, currency: 'EUR', ...over })
const ids = (r: { body: { data: { id: string }[] } }) => r.body.data.map((c) => c.id)
const storedPrice = async (f: F, id: string) =>
  (await f.app.server.deps.db.selectFrom('products').select(['price', 'currency']).where('id', '=', id).executeTakeFirstOrThrow())

eventScenarios<F>('products API', async (base) => {
  const make = async (t: typeof base.tenant, over: Record<string, unknown> = {}) => (await t.request('POST', '/v1/products', { body: body(over) })).body.data
  return {
    ...base,
    a: await make(base.tenant, { code: 'FJORD-1', durationMinutes: 180, location: 'Bergen', capacity: 40 }),
    same: await make(base.tenant, { code: 'SAME-1', price: 10.5, description: 'kept', metadata: { k: 'v' } }),
    gone: await make(base.tenant, { active: false }),
    b: await make(base.other, { code: 'OTHER-1' }),
  }
}, [
  // create
  {
    name: 'minimal body; active by default, optional fields null', method: 'POST', path: '/v1/products', body: body(), status: 201, events: ['product.created'],
    check: (r) => {
      const p = r.body.data
      assert.match(p.id, /^prd_[0-9a-f-]{36}$/)
      assert.deepEqual({ ...p, id: 0, createdAt: 0, updatedAt: 0 }, {
        id: 0, name: 'Fjord cruise', description: null, code: null, price: 149.5, currency: 'EUR', durationMinutes: null, location: null,
        capacity: null, active: true, metadata: {}, createdAt: 0, updatedAt: 0,
      })
    },
  },
  {
    name: 'price 0.3 is exact (stored as 30 minor units)', method: 'POST', path: '/v1/products', body: body({ price: 0.3 }), status: 201, events: ['product.created'],
    check: async (r, f) => {
      assert.equal(r.body.data.price, 0.3)
      assert.deepEqual(await storedPrice(f, r.body.data.id), { price: 30, currency: 'EUR' })
    },
  },
  { name: '0.1 + 0.2 as a float has too many decimals', method: 'POST', path: '/v1/products', body: body({ price: 0.1 + 0.2 }), status: 422, check: (r) => hasPaths(r, 'price') },
  { name: 'three decimals for EUR', method: 'POST', path: '/v1/products', body: body({ price: 1.005 }), status: 422, check: (r) => hasPaths(r, 'price') },
  { name: 'JPY with decimals', method: 'POST', path: '/v1/products', body: body({ price: 1500.5, currency: 'JPY' }), status: 422, check: (r) => assert.match(r.body.error.message, /price: .*0 decimal places for JPY/) },
  {
    name: 'JPY whole amount', method: 'POST', path: '/v1/products', body: body({ price: 15000, currency: 'JPY' }), status: 201, events: ['product.created'],
    check: async (r, f) => assert.deepEqual(await storedPrice(f, r.body.data.id), { price: 15000, currency: 'JPY' }),
  },
  {
    name: 'KWD with three decimals', method: 'POST', path: '/v1/products', body: body({ price: 12.345, currency: 'KWD' }), status: 201, events: ['product.created'],
    check: async (r, f) => {
      assert.equal(r.body.data.price, 12.345)
      assert.deepEqual(await storedPrice(f, r.body.data.id), { price: 12345, currency: 'KWD' })
    },
  },
  { name: 'KWD with four decimals', method: 'POST', path: '/v1/products', body: body({ price: 12.3456, currency: 'KWD' }), status: 422, check: (r) => hasPaths(r, 'price') },
  {
    name: 'large exact amount', method: 'POST', path: '/v1/products', body: body({ price: 987654321.99 }), status: 201, events: ['product.created'],
    check: async (r, f) => {
      assert.equal(r.body.data.price, 987654321.99)
      assert.equal((await storedPrice(f, r.body.data.id)).price, 98765432199)
    },
  },
  { name: 'free product', method: 'POST', path: '/v1/products', body: body({ price: 0 }), status: 201, events: ['product.created'], check: (r) => assert.equal(r.body.data.price, 0) },
  {
    name: 'negative price, price as string, bad currencies', method: 'POST', path: '/v1/products', status: 422,
    body: { name: 'x', price: -1, currency: 'eur' }, check: (r) => hasPaths(r, 'price', 'currency'),
  },
  { name: 'price as a string', method: 'POST', path: '/v1/products', body: body({ price: '10.00' }), status: 422, check: (r) => hasPaths(r, 'price') },
  { name: 'unknown currency', method: 'POST', path: '/v1/products', body: body({ currency: 'XYZ' }), status: 422, check: (r) => hasPaths(r, 'currency') },
  {
    name: 'duration, capacity, active of wrong kinds', method: 'POST', path: '/v1/products', status: 422,
    body: body({ durationMinutes: 0, capacity: 1.5, active: 'yes', location: '' }), check: (r) => hasPaths(r, 'durationMinutes', 'capacity', 'active', 'location'),
  },
  { name: 'code with spaces', method: 'POST', path: '/v1/products', body: body({ code: 'has space' }), status: 422, check: (r) => hasPaths(r, 'code') },
  { name: 'duplicate code', method: 'POST', path: '/v1/products', body: body({ code: 'FJORD-1' }), status: 409, code: 'conflict' },
  {
    name: "another tenant's code is free here", method: 'POST', path: '/v1/products', body: body({ code: 'OTHER-1' }), status: 201, events: ['product.created'],
    check: (r) => assert.equal(r.body.data.code, 'OTHER-1'),
  },
  { name: 'codes are case-sensitive', method: 'POST', path: '/v1/products', body: body({ code: 'fjord-1' }), status: 201, events: ['product.created'] },
  { name: 'required fields missing', method: 'POST', path: '/v1/products', body: {}, status: 422, check: (r) => hasPaths(r, 'name', 'price', 'currency') },
  { name: 'unknown field', method: 'POST', path: '/v1/products', body: body({ sku: 'x' }), status: 422, check: (r) => hasPaths(r, 'sku') },
  { name: 'read-only updatedAt', method: 'POST', path: '/v1/products', body: body({ updatedAt: 'x' }), status: 422, check: (r) => isReadOnly(r, 'updatedAt') },
  { name: 'no key', method: 'POST', path: '/v1/products', body: body(), as: 'anonymous', status: 401 },
  { name: 'no scope', method: 'POST', path: '/v1/products', body: body(), as: 'unscoped', status: 403, check: (r) => assert.match(r.body.error.message, /products:write/) },

  // read and list
  { name: 'own product', method: 'GET', path: (f) => `/v1/products/${f.a.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.a) },
  { name: 'unknown id', method: 'GET', path: `/v1/products/${unknownId('prd')}`, status: 404 },
  { name: 'malformed id', method: 'GET', path: '/v1/products/FJORD-1', status: 404 },
  { name: "another tenant's id", method: 'GET', path: (f) => `/v1/products/${f.b.id}`, status: 404 },
  { name: 'other tenant reads ours', method: 'GET', path: (f) => `/v1/products/${f.a.id}`, as: 'other', status: 404 },
  { name: 'no key', method: 'GET', path: '/v1/products', as: 'anonymous', status: 401 },
  { name: 'no scope', method: 'GET', path: (f) => `/v1/products/${f.a.id}`, as: 'unscoped', status: 403, check: (r) => assert.match(r.body.error.message, /products:read/) },
  {
    name: 'own products only, newest first', method: 'GET', path: '/v1/products?limit=100', status: 200,
    check: (r, f) => {
      const got = ids(r)
      assert.ok([f.a.id, f.same.id, f.gone.id].every((id) => got.includes(id)))
      assert.ok(!got.includes(f.b.id))
      assert.deepEqual(got, [...got].sort().reverse())
    },
  },
  { name: "other tenant's list never holds ours", method: 'GET', path: '/v1/products', as: 'other', status: 200, check: (r, f) => assert.deepEqual(ids(r), [f.b.id]) },
  { name: 'active=false', method: 'GET', path: '/v1/products?active=false', status: 200, check: (r, f) => assert.deepEqual(ids(r), [f.gone.id]) },
  {
    name: 'active=true', method: 'GET', path: '/v1/products?active=true&limit=100', status: 200,
    check: (r, f) => {
      assert.ok(r.body.data.every((p: any) => p.active === true))
      assert.ok(ids(r).includes(f.a.id) && !ids(r).includes(f.gone.id))
    },
  },
  { name: 'active=yes', method: 'GET', path: '/v1/products?active=yes', status: 400, check: (r) => hasPaths(r, 'active') },
  { name: 'active twice', method: 'GET', path: '/v1/products?active=true&active=false', status: 400 },
  { name: 'unknown query parameter', method: 'GET', path: '/v1/products?code=FJORD-1', status: 400, check: (r) => hasPaths(r, 'code') },

  // update
  {
    name: 'deactivate', method: 'PATCH', path: (f) => `/v1/products/${f.a.id}`, body: { active: false }, status: 200, events: ['product.updated'],
    check: (r, f) => assert.deepEqual({ ...r.body.data, updatedAt: 0 }, { ...f.a, active: false, updatedAt: 0 }),
  },
  {
    name: 'null clears optional fields', method: 'PATCH', path: (f) => `/v1/products/${f.a.id}`, status: 200, events: ['product.updated'],
    body: { code: null, durationMinutes: null, location: null, capacity: null },
    check: (r) => assert.deepEqual([r.body.data.code, r.body.data.durationMinutes, r.body.data.location, r.body.data.capacity], [null, null, null, null]),
  },
  { name: 'the freed code can be taken again', method: 'POST', path: '/v1/products', body: body({ code: 'FJORD-1' }), status: 201, events: ['product.created'] },
  { name: 'code taken by another product', method: 'PATCH', path: (f) => `/v1/products/${f.same.id}`, body: { code: 'FJORD-1' }, status: 409, code: 'conflict' },
  { name: 'new currency re-checks the kept price (10.5 → JPY)', method: 'PATCH', path: (f) => `/v1/products/${f.same.id}`, body: { currency: 'JPY' }, status: 422, check: (r) => hasPaths(r, 'price') },
  { name: 'new price with too many decimals', method: 'PATCH', path: (f) => `/v1/products/${f.same.id}`, body: { price: 10.555 }, status: 422, check: (r) => hasPaths(r, 'price') },
  {
    name: 'same values again: nothing changes, no event', method: 'PATCH', path: (f) => `/v1/products/${f.same.id}`, status: 200,
    body: { code: 'SAME-1', price: 10.5, currency: 'EUR', description: 'kept', metadata: { k: 'v' }, active: true, capacity: null },
    check: (r, f) => assert.deepEqual(r.body.data, f.same),
  },
  { name: 'null on a required field', method: 'PATCH', path: (f) => `/v1/products/${f.same.id}`, body: { price: null, active: null }, status: 422, check: (r) => hasPaths(r, 'price', 'active') },
  { name: 'read-only id', method: 'PATCH', path: (f) => `/v1/products/${f.same.id}`, body: { id: 'prd_x' }, status: 422, check: (r) => isReadOnly(r, 'id') },
  { name: 'unknown field', method: 'PATCH', path: (f) => `/v1/products/${f.same.id}`, body: { stock: 1 }, status: 422 },
  { name: 'the refused patches changed nothing', method: 'GET', path: (f) => `/v1/products/${f.same.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.same) },
  {
    name: 'currency and price together', method: 'PATCH', path: (f) => `/v1/products/${f.same.id}`, body: { currency: 'JPY', price: 1600 }, status: 200, events: ['product.updated'],
    check: async (r, f) => {
      assert.deepEqual([r.body.data.price, r.body.data.currency], [1600, 'JPY'])
      assert.deepEqual(await storedPrice(f, f.same.id), { price: 1600, currency: 'JPY' })
    },
  },
  {
    name: 'currency alone keeps the amount (JPY 1600 → KWD 1600.000)', method: 'PATCH', path: (f) => `/v1/products/${f.same.id}`, body: { currency: 'KWD' }, status: 200, events: ['product.updated'],
    check: async (r, f) => {
      assert.deepEqual([r.body.data.price, r.body.data.currency], [1600, 'KWD'])
      assert.deepEqual(await storedPrice(f, f.same.id), { price: 1600000, currency: 'KWD' })
    },
  },
  { name: 'unknown id', method: 'PATCH', path: `/v1/products/${unknownId('prd')}`, body: { active: false }, status: 404 },
  { name: "another tenant's id", method: 'PATCH', path: (f) => `/v1/products/${f.b.id}`, body: { active: false }, status: 404 },
  { name: 'other tenant patches ours', method: 'PATCH', path: (f) => `/v1/products/${f.a.id}`, body: { active: true }, as: 'other', status: 404 },
  { name: 'no scope', method: 'PATCH', path: (f) => `/v1/products/${f.a.id}`, body: { active: true }, as: 'unscoped', status: 403 },

  // delete
  { name: 'other tenant deletes ours', method: 'DELETE', path: (f) => `/v1/products/${f.gone.id}`, as: 'other', status: 404 },
  { name: 'no scope', method: 'DELETE', path: (f) => `/v1/products/${f.gone.id}`, as: 'unscoped', status: 403 },
  { name: 'no key', method: 'DELETE', path: (f) => `/v1/products/${f.gone.id}`, as: 'anonymous', status: 401 },
  { name: 'malformed id', method: 'DELETE', path: '/v1/products/x', status: 404 },
  { name: 'own product', method: 'DELETE', path: (f) => `/v1/products/${f.gone.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body, { data: { id: f.gone.id, deleted: true } }) },
  { name: 'deleted one is gone', method: 'GET', path: (f) => `/v1/products/${f.gone.id}`, status: 404 },
  { name: 'deleting twice', method: 'DELETE', path: (f) => `/v1/products/${f.gone.id}`, status: 404 },
  { name: "other tenant's product survived", method: 'GET', path: (f) => `/v1/products/${f.b.id}`, as: 'other', status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.b) },
])
