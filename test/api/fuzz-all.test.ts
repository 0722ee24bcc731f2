import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { invoiceBody, itineraryBody, paymentBody } from '../helpers/billing.ts'
import type { RouteDef } from '../../src/http/define-route.ts'

/** A valid body per resource; the fuzzer mutates these so validation gets past the top level. */
const VALID: Record<string, () => Record<string, unknown>> = {
  orders: () => orderBody(),
  customers: () => ({ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: '+47 555 0100', address: { line1: 'Bryggen 1', city: 'Bergen', country: 'NO' } }),
  products: () => ({ name: 'Fjord cruise', price: 149.5, currency: 'EUR', code: 'FJ-1', durationMinutes: 240, capacity: 40 }),
  itineraries: () => itineraryBody(),
  invoices: () => invoiceBody(),
  payments: () => paymentBody(),
  suppliers: () => ({ name: 'Hotel Bryggen', type: 'hotel', email: 'desk@hotel.example' }),
  inquiries: () => ({ name: 'Bob', email: 'bob@example.com', message: 'Space in June?', travelers: 2 }),
  content: () => ({ slug: 'bergen', title: 'Bergen', data: { lat: 60.39 }, status: 'published' }),
  webhooks: () => ({ url: 'https://hooks.example.invalid/x', events: ['order.created'], secret: 'fuzz-secret-0123456789', headers: { 'X-A': 'b' } }),
}

const leaf = fc.oneof(
  fc.string({ maxLength: 30 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null),
  fc.constantFrom('', '*', 'EUR', 'JPY', '2027-02-30', '2027-06-02', '__proto__', 1e308, -1, 0.001, 'ord_00000000-0000-7000-8000-000000000000', 'x'.repeat(600)),
)
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 10 }), tie('v'), { maxKeys: 4 })),
})).v

/** Replace, add or remove a field of the valid body, at the top level or one level down. */
function mutate(base: Record<string, unknown>, pick: number, op: number, v: unknown, key: string): unknown {
  const body: Record<string, unknown> = JSON.parse(JSON.stringify(base))
  const keys = Object.keys(body)
  const k = keys[pick % keys.length]!
  const inner = body[k]
  if (op === 0) body[k] = v
  else if (op === 1) body[key] = v
  else if (op === 2) delete body[k]
  else if (Array.isArray(inner) && inner.length && typeof inner[0] === 'object') (inner[0] as Record<string, unknown>)[Object.keys(inner[0] as object)[pick % Object.keys(inner[0] as object).length] ?? key] = v
  // An array of plain values gets one more (a key such as "length" set on it would throw here, and JSON drops the others).
  else if (Array.isArray(inner)) inner.push(v)
  else if (inner && typeof inner === 'object') (inner as Record<string, unknown>)[key] = v
  else body[k] = [v]
  return body
}

describe('random bodies at every POST and PATCH route never produce a 5xx', () => {
  let app: TestApp
  let t: TestTenant
  const ids: Record<string, string> = {}
  before(async () => {
    app = await startTestApp({ rateLimit: 10_000_000, allowPrivateTargets: true })
    t = await app.tenant()
    const make = async (path: string, body: unknown) => {
      const r = await t.request('POST', path, { body })
      assert.equal(r.status, 201, `${path}: ${r.text}`)
      return r.body.data.id as string
    }
    ids.ord = await make('/v1/orders', orderBody())
    ids.cus = await make('/v1/customers', VALID.customers!())
    ids.prd = await make('/v1/products', VALID.products!())
    ids.iti = await make('/v1/itineraries', itineraryBody())
    ids.inv = await make('/v1/invoices', invoiceBody())
    ids.pay = await make('/v1/payments', paymentBody({ amount: 100 }))
    ids.sup = await make('/v1/suppliers', VALID.suppliers!())
    ids.inq = await make('/v1/inquiries', VALID.inquiries!())
    ids.cnt = await make('/v1/content/destinations', VALID.content!())
    ids.wh = await make('/v1/webhooks', { url: 'http://127.0.0.1:9/dead', events: ['*'], secret: 'fuzz-secret-0123456789' })
    await make('/v1/orders', orderBody())
    const d = await t.request('GET', '/v1/webhooks/deliveries')
    ids.del = d.body.data[0].id
  })
  after(() => app.close())

  test('mutations of valid bodies and random JSON, for every body-taking route in the registry', async () => {
    const routes = app.server.routes.filter((r: RouteDef) => r.method === 'POST' || r.method === 'PATCH')
    assert.ok(routes.length >= 20, `found ${routes.length} routes`)
    const url = (r: RouteDef) => r.path.replace(/:(\w+)/g, (_, name: string) => {
      const rule = r.params?.[name]
      return typeof rule === 'string' ? ids[rule]! : 'destinations'
    })
    const resourceOf = (r: RouteDef) => r.path.split('/')[2]!
    await fc.assert(
      fc.asyncProperty(fc.nat(routes.length - 1), fc.nat(20), fc.nat(5), value, fc.string({ maxLength: 10 }), fc.boolean(), async (ri, pick, op, v, key, raw) => {
        const route = routes[ri]!
        const valid = VALID[resourceOf(route)]
        const action = !/:\w+$/.test(route.path) && route.path.split('/').length > 3 // /confirm, /pay, /refund, /retry
        const body = raw || !valid || action ? v : mutate(valid(), pick, op, v, key)
        const r = await t.request(route.method, url(route), { raw: JSON.stringify(body) ?? 'null', headers: { 'content-type': 'application/json' } })
        assert.ok(r.status < 500, `${route.method} ${url(route)} ${JSON.stringify(body)?.slice(0, 500)} → ${r.status} ${r.text}`)
        if (r.status >= 400) {
          assert.equal(typeof r.body?.error?.code, 'string', r.text)
          assert.ok(Array.isArray(r.body.error.details))
          assert.match(r.body.error.request_id, /^req_/)
        }
      }),
      { numRuns: 1500 },
    )
  })
})
