import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'

// V8 misreads a key written with an escape once it has seen, in objects of the same shape, a key
// of as many characters with a backslash where the escape begins (nodejs/node#63785). Each test
// starts its metadata with a key of its own, so the shape is new and the earlier key is the one
// the test sent. Replies are checked as text: the test shares the server's process, and its own
// JSON.parse would misread them the same way.
const customer = (metadata: string) => `{"firstName":"Ada","lastName":"Lovelace","email":"ada@example.com","metadata":${metadata}}`

describe('keys written with escapes, after another tenant sent a key with a backslash', () => {
  let app: TestApp
  let a: TestTenant
  let b: TestTenant
  before(async () => {
    app = await startTestApp()
    a = await app.tenant()
    b = await app.tenant()
  })
  after(() => app.close())

  const create = (t: TestTenant, metadata: string) => t.request('POST', '/v1/customers', { raw: customer(metadata), headers: { 'content-type': 'application/json' } })
  const shape = () => `s${randomUUID().slice(0, 8)}`

  for (const [escaped, name] of [['k\\u00e9', 'ké'], ['k\\n', 'k\n'], ['k\\"', 'k"'], ['k\\/', 'k/'], ['k\\u0001', 'k\u0001']] as const) {
    test(`a metadata key sent as "${escaped}" is stored and read back as ${JSON.stringify(name)}`, async () => {
      const s = shape()
      const poison = await create(a, `{"${s}":"1","k\\\\":"a's"}`)
      assert.equal(poison.status, 201, poison.text)
      const r = await create(b, `{"${s}":"1","${escaped}":"b's"}`)
      assert.equal(r.status, 201, r.text)
      const pair = `${JSON.stringify(name)}:"b's"`
      assert.ok(r.text.includes(pair), `created: ${r.text}`)
      const id = /"id":"(cus_[^"]+)"/.exec(r.text)![1]
      const read = await b.request('GET', `/v1/customers/${id}`)
      assert.ok(read.text.includes(pair), `read: ${read.text}`)
      const list = await b.request('GET', '/v1/customers?limit=100')
      assert.ok(list.text.includes(pair), `listed: ${list.text}`)
      assert.ok(!list.text.includes('"k\\\\"'), 'no key of the other tenant')
    })
  }
})
