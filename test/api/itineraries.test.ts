import assert from 'node:assert/strict'
import { assertDetail, billingScenarios, create, createOrder, get, insertCustomer, itineraryBody, type BillingFixture } from '../helpers/billing.ts'

interface F extends BillingFixture {
  orderId: string
  customerId: string
  otherOrderId: string
  otherCustomerId: string
  iti: any
  doomed: any
  otherIti: any
}

const MISSING = 'iti_01900000-0000-7000-8000-000000000000'

billingScenarios<F>('itineraries API', async (base) => {
  const orderId = await createOrder(base.tenant)
  const otherOrderId = await createOrder(base.other)
  const customerId = await insertCustomer(base.app, base.tenant.id)
  const otherCustomerId = await insertCustomer(base.app, base.other.id)
  const iti = await create(base.tenant, '/v1/itineraries', itineraryBody({ orderId, metadata: { ref: 'A-1' } }))
  const doomed = await create(base.tenant, '/v1/itineraries', itineraryBody({ title: 'To delete' }))
  const otherIti = await create(base.other, '/v1/itineraries', itineraryBody({ title: 'Theirs' }))
  return { ...base, orderId, customerId, otherOrderId, otherCustomerId, iti, doomed, otherIti }
}, [
  // create
  {
    name: 'full body', method: 'POST', path: '/v1/itineraries', status: 201, events: ['itinerary.created'],
    body: (f: F) => itineraryBody({ orderId: f.orderId, customerId: f.customerId, metadata: { agent: 'kim' } }),
    check: (r, f) => {
      const d = r.body.data
      assert.match(d.id, /^iti_[0-9a-f-]{36}$/)
      assert.equal(d.orderId, f.orderId)
      assert.equal(d.customerId, f.customerId)
      assert.deepEqual(d.days, [
        { day: 1, date: '2027-06-01', title: 'Arrival in Bergen', description: null, items: ['Airport pick-up', 'Check-in'] },
        { day: 2, date: null, title: 'Fjord cruise', description: 'All day on the Sognefjord', items: [] },
      ])
      assert.deepEqual(d.metadata, { agent: 'kim' })
      assert.equal(d.createdAt, d.updatedAt)
      assert.match(d.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    },
  },
  {
    name: 'minimal body: no days, optional fields null, metadata {}', method: 'POST', path: '/v1/itineraries', status: 201, events: ['itinerary.created'],
    body: { title: 'Day trip', startDate: '2027-01-01', endDate: '2027-01-01' },
    check: (r) => {
      const d = r.body.data
      assert.deepEqual([d.days, d.orderId, d.customerId, d.metadata], [[], null, null, {}])
    },
  },
  { name: 'no key', method: 'POST', path: '/v1/itineraries', as: 'anonymous', status: 401, code: 'unauthenticated', body: itineraryBody() },
  {
    name: 'key without itineraries:write', method: 'POST', path: '/v1/itineraries', as: 'unscoped', status: 403, code: 'forbidden', body: itineraryBody(),
    check: (r) => assert.match(r.body.error.message, /itineraries:write/),
  },
  {
    name: 'unknown field', method: 'POST', path: '/v1/itineraries', status: 422, code: 'validation_failed', body: itineraryBody({ colour: 'blue' }),
    check: (r) => assertDetail(r, 'colour', /unknown field/),
  },
  { name: 'read-only id', method: 'POST', path: '/v1/itineraries', status: 422, body: itineraryBody({ id: MISSING }), check: (r) => assertDetail(r, 'id', /read-only/) },
  {
    name: 'read-only createdAt', method: 'POST', path: '/v1/itineraries', status: 422, body: itineraryBody({ createdAt: '2027-01-01T00:00:00.000Z' }),
    check: (r) => assertDetail(r, 'createdAt', /read-only/),
  },
  {
    name: 'wrong types', method: 'POST', path: '/v1/itineraries', status: 422,
    body: { title: 7, startDate: '2027-02-30', endDate: 20270601, days: {} },
    check: (r) => { for (const p of ['title', 'startDate', 'endDate', 'days']) assertDetail(r, p) },
  },
  { name: 'missing title', method: 'POST', path: '/v1/itineraries', status: 422, body: itineraryBody({ title: undefined }), check: (r) => assertDetail(r, 'title', /required/) },
  {
    name: 'bad days entries', method: 'POST', path: '/v1/itineraries', status: 422,
    body: itineraryBody({ days: [{ day: 0, title: 'x' }, { day: 1.5, title: 'y' }, { day: 2, title: '' }, { day: 3, title: 'z', items: [1] }, { day: 3, title: 'z', extra: 1 }] }),
    check: (r) => {
      assertDetail(r, 'days[0].day', /at least 1/)
      assertDetail(r, 'days[1].day', /whole number/)
      assertDetail(r, 'days[2].title', /empty/)
      assertDetail(r, 'days[3].items[0]')
      assertDetail(r, 'days[4].extra', /unknown field/)
    },
  },
  {
    name: 'too many items in a day', method: 'POST', path: '/v1/itineraries', status: 422,
    body: itineraryBody({ days: [{ day: 1, title: 'Busy', items: Array.from({ length: 51 }, (_, i) => `item ${i}`) }] }),
    check: (r) => assertDetail(r, 'days[0].items', /at most 50/),
  },
  {
    name: 'endDate before startDate', method: 'POST', path: '/v1/itineraries', status: 422, body: itineraryBody({ startDate: '2027-06-03', endDate: '2027-06-01', days: [] }),
    check: (r) => assertDetail(r, 'endDate', /before startDate/),
  },
  {
    name: 'days outside the trip', method: 'POST', path: '/v1/itineraries', status: 422,
    body: itineraryBody({ days: [{ day: 1, date: '2027-05-31', title: 'Early' }, { day: 4, title: 'Too late' }, { day: 1, title: 'Again' }] }),
    check: (r) => {
      assertDetail(r, 'days[0].date', /within startDate 2027-06-01 and endDate 2027-06-03/)
      assertDetail(r, 'days[1].day', /at most 3/)
      assertDetail(r, 'days[2].day', /more than once/)
    },
  },
  { name: 'unknown order', method: 'POST', path: '/v1/itineraries', status: 422, body: itineraryBody({ orderId: 'ord_01900000-0000-7000-8000-000000000000' }), check: (r) => assertDetail(r, 'orderId', /no order/) },
  { name: "another tenant's order", method: 'POST', path: '/v1/itineraries', status: 422, body: (f: F) => itineraryBody({ orderId: f.otherOrderId }), check: (r) => assertDetail(r, 'orderId', /no order/) },
  { name: "another tenant's customer", method: 'POST', path: '/v1/itineraries', status: 422, body: (f: F) => itineraryBody({ customerId: f.otherCustomerId }), check: (r) => assertDetail(r, 'customerId', /no customer/) },
  { name: 'malformed order id', method: 'POST', path: '/v1/itineraries', status: 422, body: itineraryBody({ orderId: 'ord_1' }), check: (r) => assertDetail(r, 'orderId', /ord_/) },
  { name: 'malformed JSON', method: 'POST', path: '/v1/itineraries', status: 400, raw: '{"title":', headers: { 'content-type': 'application/json' } },

  // list
  {
    name: 'list: own records only, newest first', method: 'GET', path: '/v1/itineraries', status: 200,
    check: (r, f) => {
      const ids = r.body.data.map((i: any) => i.id)
      assert.ok(ids.includes(f.iti.id) && !ids.includes(f.otherIti.id))
      assert.deepEqual(ids, [...ids].sort().reverse())
      assert.equal(r.body.has_more, false)
      assert.equal(r.body.next_cursor, null)
    },
  },
  {
    name: 'list: filter orderId', method: 'GET', path: (f) => `/v1/itineraries?orderId=${f.orderId}`, status: 200,
    check: (r, f) => {
      assert.ok(r.body.data.length >= 2)
      for (const i of r.body.data) assert.equal(i.orderId, f.orderId)
      assert.ok(r.body.data.some((i: any) => i.id === f.iti.id))
    },
  },
  { name: "list: filter on another tenant's order shows nothing", method: 'GET', path: (f) => `/v1/itineraries?orderId=${f.otherOrderId}`, status: 200, check: (r) => assert.deepEqual(r.body.data, []) },
  { name: "list: other tenant never sees ours", method: 'GET', path: '/v1/itineraries?limit=100', as: 'other', status: 200, check: (r, f) => assert.deepEqual(r.body.data.map((i: any) => i.id), [f.otherIti.id]) },
  { name: 'list: unknown query parameter', method: 'GET', path: '/v1/itineraries?customer=1', status: 400, code: 'bad_request' },
  { name: 'list: bad orderId filter', method: 'GET', path: '/v1/itineraries?orderId=42', status: 400, code: 'bad_request' },
  { name: 'list: bad limit', method: 'GET', path: '/v1/itineraries?limit=0', status: 400 },
  { name: 'list: key without scope', method: 'GET', path: '/v1/itineraries', as: 'unscoped', status: 403, check: (r) => assert.match(r.body.error.message, /itineraries:read/) },
  { name: 'list: no key', method: 'GET', path: '/v1/itineraries', as: 'anonymous', status: 401 },

  // read
  { name: 'read', method: 'GET', path: (f) => `/v1/itineraries/${f.iti.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.iti) },
  { name: 'read: unknown id', method: 'GET', path: `/v1/itineraries/${MISSING}`, status: 404, code: 'not_found' },
  { name: 'read: malformed id', method: 'GET', path: '/v1/itineraries/iti_nope', status: 404, code: 'not_found' },
  { name: 'read: id of another type', method: 'GET', path: (f) => `/v1/itineraries/${f.orderId}`, status: 404 },
  { name: "read: another tenant's id", method: 'GET', path: (f) => `/v1/itineraries/${f.otherIti.id}`, status: 404, code: 'not_found' },
  { name: 'read: no key', method: 'GET', path: (f) => `/v1/itineraries/${f.iti.id}`, as: 'anonymous', status: 401 },
  { name: 'read: key without scope', method: 'GET', path: (f) => `/v1/itineraries/${f.iti.id}`, as: 'unscoped', status: 403 },
  { name: 'PUT is not a method here', method: 'PUT', path: (f) => `/v1/itineraries/${f.iti.id}`, status: 405, code: 'method_not_allowed', check: (r) => assert.equal(r.headers.get('allow'), 'GET, HEAD, PATCH, DELETE') },

  // update
  {
    name: 'patch: title and customer; no event', method: 'PATCH', path: (f) => `/v1/itineraries/${f.iti.id}`, status: 200,
    body: (f: F) => ({ title: 'Fjords, revised', customerId: f.customerId }),
    check: async (r, f) => {
      assert.equal(r.body.data.title, 'Fjords, revised')
      assert.equal(r.body.data.customerId, f.customerId)
      assert.equal(r.body.data.orderId, f.orderId)
      assert.ok(r.body.data.updatedAt >= f.iti.updatedAt)
      assert.deepEqual(await get(f.tenant, `/v1/itineraries/${f.iti.id}`), r.body.data)
    },
  },
  {
    name: 'patch: nothing changes → 200, updatedAt unchanged', method: 'PATCH', path: (f) => `/v1/itineraries/${f.iti.id}`, status: 200,
    body: (f: F) => ({ title: 'Fjords, revised', startDate: f.iti.startDate, days: f.iti.days }),
    check: async (r, f) => {
      const now = await get(f.tenant, `/v1/itineraries/${f.iti.id}`)
      assert.deepEqual(r.body.data, now)
      f.iti = now
    },
  },
  {
    name: 'patch: null clears optional fields', method: 'PATCH', path: (f) => `/v1/itineraries/${f.iti.id}`, status: 200,
    body: { orderId: null, customerId: null, metadata: null },
    check: (r) => assert.deepEqual([r.body.data.orderId, r.body.data.customerId, r.body.data.metadata], [null, null, {}]),
  },
  {
    name: 'patch: dates and days replace', method: 'PATCH', path: (f) => `/v1/itineraries/${f.iti.id}`, status: 200,
    body: { startDate: '2027-07-01', endDate: '2027-07-02', days: [{ day: 2, date: '2027-07-02', title: 'Home' }] },
    check: (r) => {
      assert.deepEqual(r.body.data.days, [{ day: 2, date: '2027-07-02', title: 'Home', description: null, items: [] }])
      assert.equal(r.body.data.endDate, '2027-07-02')
    },
  },
  { name: 'patch: endDate before startDate', method: 'PATCH', path: (f) => `/v1/itineraries/${f.iti.id}`, status: 422, body: { endDate: '2027-06-30' }, check: (r) => assertDetail(r, 'endDate', /before startDate 2027-07-01/) },
  { name: 'patch: startDate after endDate', method: 'PATCH', path: (f) => `/v1/itineraries/${f.iti.id}`, status: 422, body: { startDate: '2027-07-03' }, check: (r) => assertDetail(r, 'startDate', /after endDate 2027-07-02/) },
  {
    name: 'patch: shorter trip leaves a stored day outside', method: 'PATCH', path: (f) => `/v1/itineraries/${f.iti.id}`, status: 422, body: { endDate: '2027-07-01' },
    check: (r) => { assertDetail(r, 'days[0].day', /at most 1/); assertDetail(r, 'days[0].date', /within/) },
  },
  { name: 'patch: read-only field', method: 'PATCH', path: (f) => `/v1/itineraries/${f.iti.id}`, status: 422, body: { updatedAt: '2027-01-01T00:00:00.000Z' }, check: (r) => assertDetail(r, 'updatedAt', /read-only/) },
  { name: 'patch: null for a required field', method: 'PATCH', path: (f) => `/v1/itineraries/${f.iti.id}`, status: 422, body: { title: null }, check: (r) => assertDetail(r, 'title') },
  { name: "patch: another tenant's order", method: 'PATCH', path: (f) => `/v1/itineraries/${f.iti.id}`, status: 422, body: (f: F) => ({ orderId: f.otherOrderId }), check: (r) => assertDetail(r, 'orderId', /no order/) },
  { name: "patch: another tenant's itinerary", method: 'PATCH', path: (f) => `/v1/itineraries/${f.otherIti.id}`, status: 404, body: { title: 'Mine now' } },
  { name: 'patch: unknown id', method: 'PATCH', path: `/v1/itineraries/${MISSING}`, status: 404, body: { title: 'x' } },
  { name: 'patch: key without scope', method: 'PATCH', path: (f) => `/v1/itineraries/${f.iti.id}`, as: 'unscoped', status: 403, body: { title: 'x' } },
  {
    name: "other tenant's record unchanged by our attempts", method: 'GET', path: (f) => `/v1/itineraries/${f.otherIti.id}`, as: 'other', status: 200,
    check: (r, f) => assert.deepEqual(r.body.data, f.otherIti),
  },

  // delete
  { name: "delete: another tenant's itinerary", method: 'DELETE', path: (f) => `/v1/itineraries/${f.otherIti.id}`, status: 404 },
  { name: 'delete: key without scope', method: 'DELETE', path: (f) => `/v1/itineraries/${f.doomed.id}`, as: 'unscoped', status: 403 },
  { name: 'delete', method: 'DELETE', path: (f) => `/v1/itineraries/${f.doomed.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body, { data: { id: f.doomed.id, deleted: true } }) },
  { name: 'delete: gone afterwards', method: 'GET', path: (f) => `/v1/itineraries/${f.doomed.id}`, status: 404 },
  { name: 'delete: twice', method: 'DELETE', path: (f) => `/v1/itineraries/${f.doomed.id}`, status: 404 },
  { name: "other tenant's itinerary survived", method: 'GET', path: (f) => `/v1/itineraries/${f.otherIti.id}`, as: 'other', status: 200 },
])
