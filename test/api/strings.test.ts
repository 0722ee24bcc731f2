import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'

// CONTRACT §16: a string holding U+0000 or an unpaired surrogate, anywhere in a body or a query,
// is a 422 naming its path, on both engines (PostgreSQL cannot store U+0000: it was a 500 there).

const JSON_TYPE = { 'content-type': 'application/json' }
const customer = (over: Record<string, unknown> = {}) => ({ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', ...over })

describe('strings no database stores as sent', () => {
  let app: TestApp
  let t: TestTenant

  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true })
    t = await app.tenant()
  })
  after(() => app.close())

  const refused = async (method: string, path: string, body: unknown, paths: string[], raw?: string) => {
    const r = await t.request(method, path, raw === undefined ? { body } : { raw, headers: JSON_TYPE })
    assert.equal(r.status, 422, `${method} ${path}: ${r.text}`)
    assert.equal(r.body.error.code, 'validation_failed')
    assert.deepEqual(r.body.error.details.map((d: { path: string }) => d.path).sort(), [...paths].sort(), r.text)
    return r
  }

  test('U+0000 in a field, a nested value, an array item, a metadata key: 422 naming each path; nothing is written', async () => {
    const r = await refused('POST', '/v1/customers', customer({ firstName: 'A\u0000B' }), ['firstName'])
    assert.match(r.body.error.message, /^firstName: must not contain U\+0000/)
    await refused('POST', '/v1/customers', customer({ metadata: { note: 'x\u0000', ['k\u0000']: 'v' }, address: { line1: '\u0000' } }),
      ['metadata.note', 'metadata.k\u0000', 'address.line1'])
    await refused('POST', '/v1/orders', orderBody({ items: [{ description: 'ok', quantity: 1, unitPrice: 1 }, { description: '\u0000', quantity: 1, unitPrice: 1 }] }), ['items[1].description'])
    await refused('POST', '/v1/content/pages', { slug: 'about', title: 'About', data: { deep: [[{ x: ['\u0000'] }]] } }, ['data.deep[0][0].x[0]'])
    assert.equal((await t.request('GET', '/v1/customers')).body.data.length, 0)
    const made = await t.request('POST', '/v1/customers', { body: customer() })
    assert.equal(made.status, 201)
    await refused('PATCH', `/v1/customers/${made.body.data.id}`, { lastName: '\u0000' }, ['lastName'])
    assert.equal((await t.request('GET', `/v1/customers/${made.body.data.id}`)).body.data.lastName, 'Lovelace')
  })

  test('an unpaired surrogate escape, in a value or a key, is a 422 at its path; a real pair and an escaped backslash are kept', async () => {
    await refused('POST', '/v1/customers', null, ['firstName'], '{"firstName":"\\ud800x","lastName":"B","email":"a@b.co"}')
    await refused('POST', '/v1/customers', null, ['metadata.\udfff'], '{"firstName":"A","lastName":"B","email":"a@b.co","metadata":{"\\udfff":"v"}}')
    await refused('POST', '/v1/customers', null, ['lastName'], '{"firstName":"A","lastName":"\\uDC00\\uD800","email":"a@b.co"}')
    const ok = await t.request('POST', '/v1/customers', { raw: '{"firstName":"\\ud83d\\ude00","lastName":"\\\\u0000","email":"a@b.co"}', headers: JSON_TYPE })
    assert.equal(ok.status, 201, ok.text)
    assert.equal(ok.body.data.firstName, '\u{1F600}')
    assert.equal(ok.body.data.lastName, '\\u0000')
    assert.deepEqual((await t.request('GET', `/v1/customers/${ok.body.data.id}`)).body.data, ok.body.data)
  })

  test('a query value or name holding U+0000 is a 422 naming the parameter', async () => {
    await refused('GET', '/v1/customers?email=a%00@b.co', undefined, ['email'])
    await refused('GET', '/v1/content/pages?slug=ab%00', undefined, ['slug'])
    await refused('GET', '/v1/orders?limit=1%00', undefined, ['limit'])
    assert.equal((await t.request('GET', '/v1/customers?email=a%2500@b.co')).status !== 500, true)
  })

  test('a custom webhook header value holding U+0000 is a 422 naming the header', async () => {
    await refused('POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/h', events: ['*'], headers: { 'X-Env': 'a\u0000' } }, ['headers.X-Env'])
  })
})
