import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { MAX_UNKNOWN_FIELDS } from '../../src/http/validate.ts'
import { startTestApp, orderBody, type TestApp, type TestTenant } from '../helpers/app.ts'

// A 422 lists every problem of a body (CONTRACT §4), except where a body names more of them
// than any client could act on: a collection over its maximum is that one problem, with only
// its first `maximum` elements looked at, and unknown fields are listed up to
// MAX_UNKNOWN_FIELDS, the rest counted. 300 KB of `{}` items made 300,000 problems, a 17 MB
// answer and 12 s in which serve answered nobody.

describe('a 422 for a body with very many problems', () => {
  let app: TestApp
  let t: TestTenant
  before(async () => {
    app = await startTestApp()
    t = await app.tenant('Hostile')
  })
  after(() => app.close())

  const details = (r: { body: { error: { details: { path: string; message: string }[] } } }) => r.body.error.details

  test('an array over its maximum is that problem, and only its first maximum items are looked at', async () => {
    const r = await t.request('POST', '/v1/orders', { body: orderBody({ items: Array.from({ length: 100_000 }, () => ({})) }) })
    assert.equal(r.status, 422)
    const d = details(r)
    assert.deepEqual(d.filter((x) => x.path === 'items'), [{ path: 'items', message: 'must have at most 100 items' }])
    const items = new Set(d.filter((x) => x.path.startsWith('items[')).map((x) => Number(/^items\[(\d+)\]/.exec(x.path)![1])))
    assert.deepEqual([...items].sort((a, b) => a - b), Array.from({ length: 100 }, (_, i) => i))
    assert.equal(d.length, 1 + 100 * 3) // description, quantity, unitPrice of each of the first 100
    assert.ok(d.some((x) => x.path === 'items[99].quantity' && x.message === 'is required'))

    // Valid items over the maximum: the one problem, as before.
    const valid = orderBody({ items: Array.from({ length: 101 }, () => ({ description: 'Kayak', quantity: 1, unitPrice: 10 })) })
    const v = await t.request('POST', '/v1/orders', { body: valid })
    assert.equal(v.status, 422)
    assert.deepEqual(details(v), [{ path: 'items', message: 'must have at most 100 items' }])
  })

  test('a record over its maximum is that problem, its first entries still checked', async () => {
    const metadata = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, i % 2 ? 'ok' : [i]]))
    const r = await t.request('POST', '/v1/customers', { body: { firstName: 'Ada', lastName: 'L', email: 'ada@example.com', metadata } })
    assert.equal(r.status, 422)
    const d = details(r)
    assert.deepEqual(d.filter((x) => x.path === 'metadata'), [{ path: 'metadata', message: 'must have at most 50 keys' }])
    assert.deepEqual(d.filter((x) => x.path !== 'metadata').map((x) => x.path).sort(), Array.from({ length: 25 }, (_, i) => `metadata.k${2 * i}`).sort())

    const headers = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']))
    const h = await t.request('POST', '/v1/webhooks', { body: { url: 'https://example.com/h', events: ['*'], secret: 'whsec_0123456789abcdef', headers } })
    assert.equal(h.status, 422)
    assert.deepEqual(details(h), [{ path: 'headers', message: 'must have at most 20 headers' }])
  })

  test('unknown fields are listed up to MAX_UNKNOWN_FIELDS; one more detail counts the rest', async () => {
    const extra = 60_000
    const customer = { firstName: 'Ada', lastName: 'L', email: 'ada@example.com', ...Object.fromEntries(Array.from({ length: extra }, (_, i) => [`k${i}`, 1])) }
    const r = await t.request('POST', '/v1/orders', { body: orderBody({ customer }) })
    assert.equal(r.status, 422)
    const d = details(r)
    const unknown = d.filter((x) => /^unknown field/.test(x.message))
    assert.equal(unknown.length, MAX_UNKNOWN_FIELDS)
    assert.deepEqual(unknown.slice(0, 2), [{ path: 'customer.k0', message: 'unknown field \'k0\'' }, { path: 'customer.k1', message: 'unknown field \'k1\'' }])
    assert.deepEqual(d.filter((x) => /not listed/.test(x.message)), [{ path: 'customer', message: `and ${extra - MAX_UNKNOWN_FIELDS} more unknown fields, not listed` }])
    assert.equal(d.length, MAX_UNKNOWN_FIELDS + 1)

    // Fields not listed in two objects: counted at the body.
    const spread = await t.request('POST', '/v1/orders', { body: orderBody({ customer, colour: 'blue' }) })
    assert.deepEqual(details(spread).filter((x) => /not listed/.test(x.message)), [{ path: '', message: `and ${extra + 1 - MAX_UNKNOWN_FIELDS} more unknown fields, not listed` }])

    const few = await t.request('POST', '/v1/orders', { body: orderBody({ colour: 'blue', size: 'XL' }) })
    assert.deepEqual(details(few), [{ path: 'colour', message: 'unknown field \'colour\'' }, { path: 'size', message: 'unknown field \'size\'' }])
  })
})
