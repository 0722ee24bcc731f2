import assert from 'node:assert/strict'
import { eventScenarios, hasPaths, isReadOnly, unknownId } from '../helpers/catalog.ts'
import type { Fixture } from '../helpers/scenario.ts'

interface F extends Fixture {
  product: any // the tenant's product
  otherProduct: any // the other tenant's product
  a: any
  same: any
  gone: any
  b: any
}

const body = (over: Record<string, unknown> = {}) => ({ name: 'Grace Hopper', email: 'Grace@Example.com', message: 'Any room in June?', ...over })
const ids = (r: { body: { data: { id: string }[] } }) => r.body.data.map((c) => c.id)

eventScenarios<F>('inquiries API', async (base) => {
  const product = (await base.tenant.request('POST', '/v1/products', { body: { name: 'Fjord', price: 10, currency: 'EUR' } })).body.data
  const otherProduct = (await base.other.request('POST', '/v1/products', { body: { name: 'Theirs', price: 10, currency: 'EUR' } })).body.data
  const make = async (t: typeof base.tenant, over: Record<string, unknown> = {}) => (await t.request('POST', '/v1/inquiries', { body: body(over) })).body.data
  return {
    ...base,
    product,
    otherProduct,
    a: await make(base.tenant, { productId: product.id, travelers: 2 }),
    same: await make(base.tenant, { travelDate: '2027-06-01', phone: '+1 555 0100' }),
    gone: await make(base.tenant),
    b: await make(base.other),
  }
}, [
  {
    name: "minimal body: status new, email lower-cased", method: 'POST', path: '/v1/inquiries', body: body(), status: 201, events: ['inquiry.created'],
    check: (r) => {
      assert.match(r.body.data.id, /^inq_[0-9a-f-]{36}$/)
      assert.deepEqual({ ...r.body.data, id: 0, createdAt: 0, updatedAt: 0 }, {
        id: 0, name: 'Grace Hopper', email: 'grace@example.com', phone: null, message: 'Any room in June?', productId: null, travelDate: null,
        travelers: null, status: 'new', metadata: {}, createdAt: 0, updatedAt: 0,
      })
    },
  },
  {
    name: 'with own product, date, travelers', method: 'POST', path: '/v1/inquiries', status: 201, events: ['inquiry.created'],
    body: (f: F) => body({ productId: f.product.id, travelDate: '2027-02-28', travelers: 4, metadata: { src: 'web' } }),
    check: (r, f) => assert.deepEqual([r.body.data.productId, r.body.data.travelDate, r.body.data.travelers], [f.product.id, '2027-02-28', 4]),
  },
  { name: "another tenant's product", method: 'POST', path: '/v1/inquiries', body: (f: F) => body({ productId: f.otherProduct.id }), status: 422, check: (r) => hasPaths(r, 'productId') },
  { name: 'unknown product', method: 'POST', path: '/v1/inquiries', body: body({ productId: unknownId('prd') }), status: 422, check: (r) => hasPaths(r, 'productId') },
  { name: 'malformed product id', method: 'POST', path: '/v1/inquiries', body: body({ productId: 'fjord' }), status: 422, check: (r) => hasPaths(r, 'productId') },
  { name: 'a customer id is no product id', method: 'POST', path: '/v1/inquiries', body: body({ productId: unknownId('cus') }), status: 422, check: (r) => hasPaths(r, 'productId') },
  { name: 'status is read-only on create', method: 'POST', path: '/v1/inquiries', body: body({ status: 'closed' }), status: 422, check: (r) => isReadOnly(r, 'status') },
  {
    name: 'bad date, travelers, email, empty message', method: 'POST', path: '/v1/inquiries', status: 422,
    body: body({ travelDate: '2027-02-30', travelers: 0, email: 'grace', message: '  ' }), check: (r) => hasPaths(r, 'travelDate', 'travelers', 'email', 'message'),
  },
  { name: 'fractional travelers', method: 'POST', path: '/v1/inquiries', body: body({ travelers: 2.5 }), status: 422, check: (r) => hasPaths(r, 'travelers') },
  { name: 'unknown field', method: 'POST', path: '/v1/inquiries', body: body({ budget: 100 }), status: 422, check: (r) => hasPaths(r, 'budget') },
  { name: 'no key', method: 'POST', path: '/v1/inquiries', body: body(), as: 'anonymous', status: 401 },
  { name: 'no scope', method: 'POST', path: '/v1/inquiries', body: body(), as: 'unscoped', status: 403, check: (r) => assert.match(r.body.error.message, /inquiries:write/) },

  { name: 'own inquiry', method: 'GET', path: (f) => `/v1/inquiries/${f.a.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.a) },
  { name: 'unknown id', method: 'GET', path: `/v1/inquiries/${unknownId('inq')}`, status: 404 },
  { name: 'malformed id', method: 'GET', path: '/v1/inquiries/123', status: 404 },
  { name: "another tenant's id", method: 'GET', path: (f) => `/v1/inquiries/${f.b.id}`, status: 404 },
  { name: 'other tenant reads ours', method: 'GET', path: (f) => `/v1/inquiries/${f.a.id}`, as: 'other', status: 404 },
  { name: 'no scope', method: 'GET', path: '/v1/inquiries', as: 'unscoped', status: 403, check: (r) => assert.match(r.body.error.message, /inquiries:read/) },
  {
    name: 'own inquiries only, newest first', method: 'GET', path: '/v1/inquiries', status: 200,
    check: (r, f) => {
      const got = ids(r)
      assert.ok([f.a.id, f.same.id, f.gone.id].every((id) => got.includes(id)) && !got.includes(f.b.id))
      assert.deepEqual(got, [...got].sort().reverse())
    },
  },
  { name: "other tenant's list never holds ours", method: 'GET', path: '/v1/inquiries', as: 'other', status: 200, check: (r, f) => assert.deepEqual(ids(r), [f.b.id]) },
  { name: 'no filters exist', method: 'GET', path: '/v1/inquiries?status=new', status: 400, check: (r) => hasPaths(r, 'status') },

  // updates never emit events
  { name: 'respond', method: 'PATCH', path: (f) => `/v1/inquiries/${f.a.id}`, body: { status: 'responded' }, status: 200, check: (r, f) => assert.deepEqual({ ...r.body.data, updatedAt: 0 }, { ...f.a, status: 'responded', updatedAt: 0 }) },
  { name: 'close', method: 'PATCH', path: (f) => `/v1/inquiries/${f.a.id}`, body: { status: 'closed' }, status: 200, check: (r) => assert.equal(r.body.data.status, 'closed') },
  { name: 'reopen: any status may follow any other', method: 'PATCH', path: (f) => `/v1/inquiries/${f.a.id}`, body: { status: 'new' }, status: 200, check: (r) => assert.equal(r.body.data.status, 'new') },
  { name: 'unknown status', method: 'PATCH', path: (f) => `/v1/inquiries/${f.a.id}`, body: { status: 'open' }, status: 422, check: (r) => hasPaths(r, 'status') },
  { name: "another tenant's product", method: 'PATCH', path: (f) => `/v1/inquiries/${f.a.id}`, body: (f: F) => ({ productId: f.otherProduct.id }), status: 422, check: (r) => hasPaths(r, 'productId') },
  {
    name: 'null clears product and travelers', method: 'PATCH', path: (f) => `/v1/inquiries/${f.a.id}`, body: { productId: null, travelers: null }, status: 200,
    check: (r) => assert.deepEqual([r.body.data.productId, r.body.data.travelers], [null, null]),
  },
  { name: 'same values: unchanged', method: 'PATCH', path: (f) => `/v1/inquiries/${f.same.id}`, body: { status: 'new', travelDate: '2027-06-01', email: 'GRACE@example.com' }, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.same) },
  { name: 'null on a required field', method: 'PATCH', path: (f) => `/v1/inquiries/${f.same.id}`, body: { message: null }, status: 422, check: (r) => hasPaths(r, 'message') },
  { name: 'read-only id', method: 'PATCH', path: (f) => `/v1/inquiries/${f.same.id}`, body: { id: 'x' }, status: 422, check: (r) => isReadOnly(r, 'id') },
  { name: 'unknown id', method: 'PATCH', path: `/v1/inquiries/${unknownId('inq')}`, body: { status: 'closed' }, status: 404 },
  { name: "another tenant's id", method: 'PATCH', path: (f) => `/v1/inquiries/${f.b.id}`, body: { status: 'closed' }, status: 404 },
  { name: 'other tenant patches ours', method: 'PATCH', path: (f) => `/v1/inquiries/${f.same.id}`, body: { status: 'closed' }, as: 'other', status: 404 },
  { name: 'no scope', method: 'PATCH', path: (f) => `/v1/inquiries/${f.same.id}`, body: { status: 'closed' }, as: 'unscoped', status: 403 },
  { name: 'refused patches changed nothing', method: 'GET', path: (f) => `/v1/inquiries/${f.same.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.same) },

  { name: 'other tenant deletes ours', method: 'DELETE', path: (f) => `/v1/inquiries/${f.gone.id}`, as: 'other', status: 404 },
  { name: 'no key', method: 'DELETE', path: (f) => `/v1/inquiries/${f.gone.id}`, as: 'anonymous', status: 401 },
  { name: 'own inquiry', method: 'DELETE', path: (f) => `/v1/inquiries/${f.gone.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body, { data: { id: f.gone.id, deleted: true } }) },
  { name: 'deleted one is gone', method: 'GET', path: (f) => `/v1/inquiries/${f.gone.id}`, status: 404 },
  { name: "another tenant's id", method: 'DELETE', path: (f) => `/v1/inquiries/${f.b.id}`, status: 404 },
])
