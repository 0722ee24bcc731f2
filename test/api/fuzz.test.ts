import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'

/** JSON-ish values biased towards the shapes the routes expect, with hostile leaves. */
const leaf = fc.oneof(
  fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null),
  fc.constantFrom('', 'EUR', 'JPY', '2027-02-30', '__proto__', 'constructor', 1e308, -0, 0.1, 'ord_00000000-0000-7000-8000-000000000000'),
)
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('v'), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 12 }), tie('v'), { maxKeys: 5 })),
})).v
const field = fc.constantFrom('customer', 'items', 'currency', 'travelDate', 'notes', 'metadata', 'status', 'total', 'id', 'customerId')
/** A valid order with some fields replaced by random values, or something random altogether. */
const body = fc.oneof(
  value,
  fc.tuple(fc.dictionary(field, value, { maxKeys: 3 })).map(([over]) => ({ ...orderBody(), ...over })),
  fc.tuple(fc.nat(3), value).map(([i, v]) => {
    const b = orderBody({ items: [{ description: 'a', quantity: 1, unitPrice: 1 }, { description: 'b', quantity: 2, unitPrice: 2.5 }] })
    ;(b.items as Record<string, unknown>[])[i % 2] = { ...(b.items as Record<string, unknown>[])[i % 2], [['description', 'quantity', 'unitPrice', 'productId'][i]!]: v }
    return b
  }),
)

describe('random bodies never produce a 5xx', () => {
  let app: TestApp
  let t: TestTenant
  let orderId: string
  before(async () => {
    app = await startTestApp({ rateLimit: 1_000_000 })
    t = await app.tenant()
    orderId = (await t.request('POST', '/v1/orders', { body: orderBody() })).body.data.id
  })
  after(() => app.close())

  const routes = () => [
    ['POST', '/v1/orders'], ['PATCH', `/v1/orders/${orderId}`], ['POST', `/v1/orders/${orderId}/confirm`], ['POST', `/v1/orders/${orderId}/cancel`],
  ] as const

  test('order routes answer 2xx or a 4xx in the error shape', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(3), body, async (which, b) => {
        const [method, path] = routes()[which]!
        const r = await t.request(method, path, { raw: JSON.stringify(b) ?? 'null', headers: { 'content-type': 'application/json' } })
        assert.ok(r.status < 500, `${method} ${path} ${JSON.stringify(b)} → ${r.status} ${r.text}`)
        if (r.status >= 400) {
          assert.equal(typeof r.body.error.code, 'string')
          assert.equal(typeof r.body.error.message, 'string')
          assert.ok(Array.isArray(r.body.error.details))
        }
      }),
      { numRuns: 300 },
    )
  })

  test('raw garbage bodies and headers answer 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8', ''), async (raw, type) => {
        const r = await t.request('POST', '/v1/orders', { raw, headers: type ? { 'content-type': type } : {} })
        assert.ok(r.status < 500, `${JSON.stringify(raw)} as ${type} → ${r.status} ${r.text}`)
      }),
      { numRuns: 150 },
    )
  })
})
