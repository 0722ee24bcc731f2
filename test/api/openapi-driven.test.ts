import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Ajv2020 } from 'ajv/dist/2020.js'
import fc from 'fast-check'
import * as v from 'valibot'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { documentValidator, withComponents } from '../helpers/openapi.ts'
import { arbitraryOf, type Schema } from '../helpers/schema-arbitrary.ts'

/**
 * CONTRACT §16: requests generated from the document's own schemas (fast-check), sent to a
 * running server. A request the document calls valid is never refused with 400 or 422 (404 and
 * 409 are the data's answer); one it calls invalid (one field mutated: wrong type, out of range,
 * pattern broken, required missing, unknown field) always is; nothing is a 5xx; every answer
 * validates against the document. References in bodies and queries name real records of the
 * tenant. Dashboard-session routes and DELETEs (no body or query) are left to their own tests.
 */
const SEED = Number(process.env.OPENAPI_DRIVEN_SEED ?? 20270601)
const RUNS = 20

describe('requests generated from the OpenAPI document', () => {
  let app: TestApp
  let t: TestTenant
  let doc: any
  let ids: Record<string, string[]>
  let sent = 0

  before(async () => {
    // Webhook URLs the document allows name hosts of the test's own (SSRF checks are the state of the server's settings).
    app = await startTestApp({ allowPrivateTargets: true, rateLimit: 1_000_000 })
    t = await app.tenant()
    doc = (await app.request('GET', '/v1/openapi.json')).body
    const must = async (path: string, body: unknown) => {
      const r = await t.request('POST', path, { body })
      assert.equal(r.status, 201, `${path}: ${r.text}`)
      return r.body.data.id as string
    }
    const cus = await must('/v1/customers', { firstName: 'Ada', lastName: 'L', email: 'ada@example.com' })
    const prd = await must('/v1/products', { name: 'Tour', price: 10, currency: 'EUR' })
    const ord = await must('/v1/orders', { currency: 'EUR', items: [{ description: 'x', quantity: 1, unitPrice: 100 }], customerId: cus })
    const inv = await must('/v1/invoices', { currency: 'EUR', lines: [{ description: 'x', quantity: 1, unitPrice: 100 }], orderId: ord })
    const pay = await must('/v1/payments', { amount: 5, currency: 'EUR', method: 'card', orderId: ord })
    const wh = await must('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'], secret: 'a-secret-of-16-chars' })
    ids = {
      cus: [cus], prd: [prd], ord: [ord], inv: [inv], pay: [pay], wh: [wh],
      itn: [await must('/v1/itineraries', { title: 'Trip', startDate: '2027-06-01', endDate: '2027-06-03' })],
      sup: [await must('/v1/suppliers', { name: 'Hotel', type: 'hotel' })],
      inq: [await must('/v1/inquiries', { name: 'Ada', email: 'ada@example.com', message: 'Hi' })],
      cnt: [await must('/v1/content/pages', { slug: 'home', title: 'Home' })],
      key: [t.keyId],
    }
    const test = await t.request('POST', `/v1/webhooks/${wh}/test`, { body: {} })
    assert.equal(test.status, 202, test.text)
    ids.dlv = [test.body.data.id ?? test.body.data.delivery_id]
    ids.evt = [test.body.data.event_id]
  })
  after(async () => {
    console.log(`openapi-driven: ${sent} requests sent (seed ${SEED})`)
    await app?.close()
  })

  test('every request body and query parameter has an example that validates and that the server accepts', async () => {
    const ajv = new Ajv2020({ strict: false })
    for (const format of ['date', 'date-time', 'email', 'uri']) ajv.addFormat(format, { type: 'string', validate: FORMATS[format]! })
    const problems: string[] = []
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        const query = (op.parameters ?? []).filter((p: any) => p.in === 'query' && p.name !== 'cursor')
        const body = op.requestBody?.content['application/json']
        for (const p of query) {
          if (!('example' in p)) problems.push(`${method} ${path}: query ${p.name} has no example`)
          else if (!ajv.validate(withComponents(doc, p.schema), p.example)) problems.push(`${method} ${path}: query ${p.name} example ${JSON.stringify(p.example)} is invalid`)
        }
        if (body && !('example' in body)) problems.push(`${method} ${path}: the body has no example`)
        else if (body && !ajv.validate(withComponents(doc, body.schema), body.example)) problems.push(`${method} ${path}: the body example is invalid: ${ajv.errorsText()}`)
        // Sent as a key of the tenant: the dashboard's own routes are tested with a session elsewhere.
        if (!(op.security ?? []).some((s: object) => 'bearerAuth' in s) || (!query.length && !body)) continue
        // An event stream's answer never ends: its examples are sent in test/api/events-stream.test.ts.
        if (op.responses?.['200']?.content?.['text/event-stream']) continue
        const qs = new URLSearchParams(query.map((p: any): [string, string] => [p.name, String(p.example)])).toString()
        const target = `${_path(path, ids)}${qs ? `?${qs}` : ''}`
        const r = await t.request(method.toUpperCase(), target, body ? { body: _realIds(body.example, ids) } : {})
        sent++
        if (r.status === 400 || r.status === 422 || r.status >= 500) problems.push(`${method.toUpperCase()} ${target} ${JSON.stringify(body?.example)} → ${r.status} ${r.text.slice(0, 300)}`)
      }
    }
    assert.deepEqual(problems, [])
  })

  test('valid requests are accepted, invalid ones refused with 400/422, answers match the document', async () => {
    const check = documentValidator(doc)
    const ajv = new Ajv2020({ strict: false, allErrors: false })
    for (const format of ['date', 'date-time', 'email', 'uri']) ajv.addFormat(format, { type: 'string', validate: FORMATS[format]! })
    const opts = { components: doc.components.schemas, ids }
    const problems: string[] = []
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        if (method === 'delete' || !(op.security ?? []).every((s: object) => 'bearerAuth' in s) || (op.security ?? []).length === 0) continue
        // An event stream's answer never ends: its query is tested in test/api/events-stream.test.ts.
        if (op.responses?.['200']?.content?.['text/event-stream']) continue
        const query: Schema = { type: 'object', additionalProperties: false, properties: {}, required: [] }
        for (const p of op.parameters ?? []) {
          if (p.in !== 'query' || p.name === 'cursor') continue
          query.properties[p.name] = p.schema
          if (p.required) query.required.push(p.name)
        }
        const body: Schema | undefined = op.requestBody?.content['application/json'].schema
        if (!Object.keys(query.properties).length && !body) continue
        const validBody = body && ajv.compile(withComponents(doc, body))
        const validQuery = ajv.compile(query)
        const url = _path(path, ids)
        const send = async (q: Record<string, unknown>, b: unknown, expectValid: boolean, what: string) => {
          const qs = new URLSearchParams(Object.entries(q).map(([k, x]): [string, string] => [k, String(x)])).toString()
          const target = qs ? `${url}?${qs}` : url
          const r = await t.request(method.toUpperCase(), target, b === undefined ? {} : { body: b })
          sent++
          const tag = `${method.toUpperCase()} ${target} ${JSON.stringify(b)?.slice(0, 300)} (${what}) → ${r.status} ${r.text.slice(0, 300)}`
          if (r.status >= 500) problems.push(`5xx: ${tag}`)
          else if (expectValid && (r.status === 400 || r.status === 422) && !_stated(op.description, r.body)) problems.push(`valid refused: ${tag}`)
          else if (!expectValid && r.status !== 400 && r.status !== 422) problems.push(`invalid accepted: ${tag}`)
          else if (r.status < 300) {
            try { check.response(method.toUpperCase(), path, r.status, r.body) } catch (err) { problems.push(`answer: ${tag}: ${(err as Error).message.slice(0, 400)}`) }
          } else {
            try { check.component('Error', r.body) } catch (err) { problems.push(`error answer: ${tag}: ${(err as Error).message.slice(0, 400)}`) }
          }
        }
        const queryArb = arbitraryOf(query, opts).filter((x) => validQuery(x))
        const bodyArb = body ? arbitraryOf(body, opts).filter((x) => validBody!(x)) : fc.constant(undefined)
        const pair = fc.tuple(queryArb, bodyArb) as fc.Arbitrary<[Record<string, unknown>, unknown]>
        const seed = SEED + sent
        // Valid requests.
        for (const [q, b] of fc.sample(pair, { numRuns: RUNS, seed })) await send(q, b, true, 'valid')
        // Invalid requests: one mutation of a valid one, which the document itself must refuse.
        for (const [q, b] of fc.sample(pair, { numRuns: RUNS, seed: seed + 1 })) {
          const target = body && (Object.keys(query.properties).length === 0 || (b !== undefined && seed % 2 === 0)) ? 'body' : 'query'
          const schema = target === 'body' ? body! : query
          const value = target === 'body' ? b : q
          const mutated = _mutate(schema, value, doc.components.schemas, sent)
          if (mutated === undefined) continue
          const stillValid = target === 'body' ? validBody!(mutated.value) : validQuery(mutated.value)
          if (stillValid) continue
          if (target === 'query' && !_querySafe(mutated.value)) continue
          await send(target === 'query' ? mutated.value as Record<string, unknown> : q, target === 'body' ? mutated.value : b, false, mutated.how)
        }
      }
    }
    assert.deepEqual(problems.slice(0, 40), [], `${problems.length} disagreements (seed ${SEED}); OPENAPI_DRIVEN_SEED=${SEED} repeats them`)
  })
})

/**
 * What the server refuses beyond the schemas, as each operation's description says it
 * (`rules` of its route): a refusal is expected when every detail is one of these and the
 * operation's description states the rule.
 */
const RULES: { refusal: RegExp; stated: RegExp }[] = [
  { refusal: /^(items|lines): (order|invoice) total is too large$/, stated: /over 10\^13 minor units/ },
  { refusal: /^endDate: must not be before startDate/, stated: /`endDate` before `startDate`/ },
  { refusal: /^startDate: must not be after endDate/, stated: /`endDate` before `startDate`/ },
  { refusal: /^days\[\d+\]\.day: must be at most \d+, the number of days/, stated: /`days\[\]\.day` past the number of days/ },
  { refusal: /^days\[\d+\]\.date: must be within startDate/, stated: /`days\[\]\.date` outside/ },
  { refusal: /^days\[\d+\]\.day: day \d+ is listed more than once$/, stated: /`days\[\]\.day` listed twice/ },
  { refusal: /^amount: must be at most [\d.]+, what is left of payment/, stated: /`amount` over what is left of the payment/ },
  { refusal: /^event: this subscription does not receive '/, stated: /An event the subscription does not receive answers 422/ },
  { refusal: /^until: must be after since$/, stated: /`until` .* not after `since`/ },
  { refusal: /^since: range too long for \w+ buckets$/, stated: /more than 1000 buckets/ },
]

const FORMATS: Record<string, (s: string) => boolean> = {
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s),
  'date-time': (s) => v.is(v.pipe(v.string(), v.isoTimestamp()), s) && !Number.isNaN(Date.parse(s)),
  email: (s) => v.is(v.pipe(v.string(), v.email()), s),
  uri: (s) => v.is(v.pipe(v.string(), v.url()), s),
}

/** `value` with each id of the example (a well-formed id of no record) replaced by a real record's id of its prefix. */
function _realIds(value: unknown, ids: Record<string, string[]>): unknown {
  if (typeof value === 'string') {
    const prefix = /^(\w+)_[0-9a-f-]{36}$/.exec(value)?.[1]
    return prefix && ids[prefix] ? ids[prefix]![0] : value
  }
  if (Array.isArray(value)) return value.map((x) => _realIds(x, ids))
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, _realIds(x, ids)]))
  return value
}

/** Whether every detail of a refusal is a rule the operation's description states. */
function _stated(description: string, body: any): boolean {
  const details: { path: string; message: string }[] = body?.error?.details ?? []
  return details.length > 0 && details.every((d) => RULES.some((r) => r.refusal.test(`${d.path}: ${d.message}`) && r.stated.test(description)))
}

function _path(path: string, ids: Record<string, string[]>): string {
  return path
    .replace('{entity}', 'pages')
    .replace(/\/v1\/(\w+)(?:\/([a-z-]+))?\/\{id\}/, (whole, resource: string, sub: string | undefined) => {
      const prefix = sub === 'deliveries' ? 'dlv' : _PREFIX[resource]!
      return whole.replace('{id}', ids[prefix]![0]!)
    })
}

const _PREFIX: Record<string, string> = {
  keys: 'key', orders: 'ord', customers: 'cus', products: 'prd', itineraries: 'itn', invoices: 'inv', payments: 'pay',
  suppliers: 'sup', inquiries: 'inq', content: 'cnt', webhooks: 'wh', events: 'evt',
}

/** A query value is text: a mutation that does not survive String() says nothing about the server. */
const _querySafe = (q: unknown) => Object.values(q as object).every((x) => typeof x === 'string' || typeof x === 'number')

/** One field of `value` broken: an unknown field, a required one missing, or one property given a wrong value. */
function _mutate(schema: Schema, value: unknown, components: Record<string, Schema>, n: number): { value: unknown; how: string } | undefined {
  if (schema.$ref) return _mutate(components[schema.$ref.split('/').pop()]!, value, components, n)
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined
  const o = value as Record<string, unknown>
  const props = Object.keys(schema.properties ?? {})
  const choice = n % 3
  if (choice === 0 && schema.additionalProperties === false) return { value: { ...o, unknown_field_x: 'x' }, how: 'unknown field' }
  if (choice === 1 && schema.required?.length) {
    const k = schema.required[n % schema.required.length]
    const { [k]: _, ...rest } = o
    return { value: rest, how: `missing ${k}` }
  }
  const present = props.filter((k) => k in o)
  const k = (present.length ? present : props)[n % Math.max(1, (present.length ? present : props).length)]
  if (!k) return schema.additionalProperties === false ? { value: { ...o, unknown_field_x: 'x' }, how: 'unknown field' } : undefined
  const bad = _wrong(schema.properties[k], n)
  return { value: { ...o, [k]: bad.value }, how: `${k}: ${bad.how}` }
}

function _wrong(s: Schema, n: number): { value: unknown; how: string } {
  const branch: Schema = s.anyOf ? { ...s, ...s.anyOf.find((b: Schema) => b.type !== 'null') } : s
  const out: { value: unknown; how: string }[] = [{ value: branch.type === 'string' ? 12345 : 'not-a-value', how: 'wrong type' }]
  if (branch.maximum !== undefined) out.push({ value: branch.maximum + 1, how: 'above maximum' })
  if (branch.minimum !== undefined) out.push({ value: branch.minimum - 1, how: 'below minimum' })
  if (branch.maxLength !== undefined) out.push({ value: 'x'.repeat(branch.maxLength + 1), how: 'too long' })
  if (branch.pattern || branch.enum || branch.format) out.push({ value: '%%% not this %%%', how: 'pattern/enum/format broken' })
  if (branch.type === 'array' && branch.maxItems !== undefined && branch.items) out.push({ value: [], how: 'too few items' })
  return out[n % out.length]!
}
