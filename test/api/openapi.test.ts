import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { createApp } from '../../src/app.ts'
import { EVENT_NAMES } from '../../src/events/catalog.ts'
import type { RouteDef } from '../../src/http/define-route.ts'
import { toOpenApiPath } from '../../src/http/openapi.ts'
import { describeScope } from '../../src/lib/scopes.ts'
import { VERSION } from '../../src/version.ts'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { withComponents } from '../helpers/openapi.ts'

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect); formats are documentation here, not checked. */
const ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: false })

async function openApiErrors(doc: unknown): Promise<unknown> {
  const result = await new Validator().validate(structuredClone(doc) as Record<string, unknown>)
  return result.valid ? undefined : result.errors
}

describe('GET /v1/openapi.json', () => {
  let app: TestApp
  let tenant: TestTenant
  let doc: any
  let routes: readonly RouteDef[]

  before(async () => {
    app = await startTestApp()
    tenant = await app.tenant()
    routes = createApp(app.server.deps).routes
    const reply = await app.request('GET', '/v1/openapi.json')
    assert.equal(reply.status, 200, reply.text)
    doc = reply.body
  })
  after(() => app.close())

  test('is served without a key, as JSON, and the same on every request', async () => {
    const first = await app.request('GET', '/v1/openapi.json')
    assert.equal(first.status, 200)
    assert.match(first.headers.get('content-type') ?? '', /^application\/json/)
    assert.equal(first.headers.get('x-tenant-id'), null)
    const withBadKey = await app.request('GET', '/v1/openapi.json', { key: 'tok_not_a_key' })
    assert.equal(withBadKey.status, 200)
    assert.equal(withBadKey.text, first.text)
    assert.deepEqual(first.body, doc)
  })

  test('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(await openApiErrors(doc), undefined)
    assert.match(doc.openapi, /^3\.1\./)
    assert.equal(doc.info.title, 'travelops')
    assert.equal(doc.info.version, VERSION)
  })

  test('the validator does reject broken documents', async () => {
    const noTitle = structuredClone(doc)
    delete noTitle.info.title
    assert.match(JSON.stringify(await openApiErrors(noTitle)), /title/, 'info.title is required')
    const badResponses = structuredClone(doc)
    badResponses.paths['/v1/orders'].get.responses = { ok: { description: 'not a status code' } }
    assert.match(JSON.stringify(await openApiErrors(badResponses)), /responses/, 'response keys are status codes')
    const dangling = structuredClone(doc)
    delete dangling.components.schemas.Error
    assert.match(JSON.stringify(await openApiErrors(dangling)), /components\/schemas\/Error/, '$ref to a missing component')
  })

  test('lists every registered route, itself included, and nothing else', () => {
    assert.ok(routes.some((r) => r.path === '/v1/openapi.json'))
    for (const route of routes) {
      const op = doc.paths[toOpenApiPath(route.path)]?.[route.method.toLowerCase()]
      assert.ok(op, `${route.method} ${route.path} is missing`)
      assert.equal(op.summary, route.summary)
      for (const [, name] of route.path.matchAll(/:(\w+)/g)) {
        assert.ok(op.parameters?.some((p: any) => p.in === 'path' && p.name === name && p.required), `${route.method} ${route.path}: path parameter ${name}`)
      }
      assert.deepEqual(op.tags, [route.tag])
      if (route.scope === 'public') {
        assert.deepEqual(op.security, [], `${route.method} ${route.path} needs no key`)
        assert.equal(op['x-required-scope'], undefined)
      } else {
        const session = route.scope === 'session' || route.scope === 'operator'
        assert.deepEqual(op.security, [session ? { dashboardSession: [] } : { bearerAuth: [] }], `${route.method} ${route.path} needs a key or a session`)
        assert.equal(op['x-required-scope'], describeScope(route.scope))
        assert.ok(op.responses['401'] && op.responses['403'] && op.responses['429'])
      }
      assert.deepEqual(op['x-events'], route.events?.length ? [...route.events] : undefined)
      assert.ok(op.responses[String(route.status ?? 200)], `${route.method} ${route.path} success status`)
    }
    const operations = Object.values<Record<string, any>>(doc.paths).flatMap((item) => Object.values(item))
    assert.equal(operations.length, routes.length, 'no operation without a route')
    assert.equal(new Set(operations.map((op) => op.operationId)).size, routes.length, 'operationIds are unique')
    assert.equal(doc.components.securitySchemes.bearerAuth.scheme, 'bearer')
  })

  test('describes every operation and tag, names servers and the MIT license (no placeholder contact), and types limit as an integer', () => {
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) assert.ok(op.description?.length > op.summary.length, `${method} ${path}`)
    }
    assert.match(doc.paths['/v1/orders'].post.description, /`orders:write`.*Emits `order\.created`/)
    for (const tag of doc.tags) assert.ok(tag.description, `tag ${tag.name}`)
    assert.ok(doc.servers.length > 0)
    assert.deepEqual(doc.info.license, { name: 'MIT', identifier: 'MIT' })
    assert.equal(doc.info.contact, undefined)
    const limit = doc.paths['/v1/orders'].get.parameters.find((p: any) => p.name === 'limit')
    assert.deepEqual(limit.schema, { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size, 1–100' })
  })

  test('the webhooks section has one POST per event with the signature headers and a valid example body', () => {
    assert.deepEqual(Object.keys(doc.webhooks), [...EVENT_NAMES])
    const event = withComponents(doc, doc.components.schemas.Event)
    for (const name of EVENT_NAMES) {
      const op = doc.webhooks[name].post
      const headers = op.parameters.map((p: any) => doc.components.parameters[p.$ref.split('/').pop()].name)
      for (const h of ['X-Webhook-ID', 'X-Webhook-Timestamp', 'X-Webhook-Signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature']) assert.ok(headers.includes(h), `${name}: ${h}`)
      const media = op.requestBody.content['application/json']
      assert.equal(media.example.event, name)
      _assertMatches(event, media.example)
      _assertMatches(withComponents(doc, media.schema), media.example)
      assert.equal(ajv.compile(withComponents(doc, media.schema))({ ...media.example, event: name === 'order.created' ? 'order.updated' : 'order.created' }), false)
    }
  })

  test('path parameters carry the id pattern that decides 404', async () => {
    const [param] = doc.paths['/v1/orders/{id}'].get.parameters
    assert.equal(param.name, 'id')
    assert.equal(param.in, 'path')
    const pattern = new RegExp(param.schema.pattern)
    const created = await tenant.request('POST', '/v1/orders', { body: orderBody() })
    assert.match(created.body.data.id, pattern)
    assert.doesNotMatch('ord_123', pattern)
    assert.equal((await tenant.request('GET', '/v1/orders/ord_123')).status, 404)
  })

  test('every schema in it is valid JSON Schema 2020-12', () => {
    const schemas = _collectSchemas(doc)
    assert.ok(schemas.length > 10)
    for (const schema of schemas) assert.ok(ajv.validateSchema(schema), JSON.stringify(ajv.errors))
  })

  test('the orders body schema is the one that validates requests', async () => {
    const body = doc.paths['/v1/orders'].post.requestBody
    assert.equal(body.required, true)
    const schema = body.content['application/json'].schema
    assert.deepEqual([...schema.required].sort(), ['currency', 'items'], 'customer is optional when customerId is given')
    assert.equal(schema.additionalProperties, false)
    assert.equal(schema.properties.customer.additionalProperties, false)
    assert.equal(schema.properties.items.minItems, 1)
    const validate = ajv.compile(schema)
    // What the schema accepts the API accepts, and what it refuses the API refuses.
    assert.ok(validate(orderBody()), JSON.stringify(validate.errors))
    assert.equal((await tenant.request('POST', '/v1/orders', { body: orderBody() })).status, 201)
    for (const bad of [orderBody({ total: 10 }), orderBody({ items: [] }), orderBody({ customer: { firstName: 'Ada' } })]) {
      assert.equal(validate(bad), false, JSON.stringify(bad))
      assert.equal((await tenant.request('POST', '/v1/orders', { body: bad })).status, 422)
    }
  })

  test('query parameters are documented, with limit and cursor on lists', () => {
    const names = doc.paths['/v1/orders'].get.parameters.map((p: any) => `${p.in}:${p.name}`)
    assert.deepEqual(names.sort(), ['query:createdAfter', 'query:createdBefore', 'query:cursor', 'query:customerId', 'query:limit', 'query:status'])
  })

  test('real answers match the documented success and error shapes', async () => {
    const list = await tenant.request('GET', '/v1/orders?limit=1')
    _assertMatches(withComponents(doc, doc.paths['/v1/orders'].get.responses['200'].content['application/json'].schema), list.body)
    const health = await app.request('GET', '/health')
    _assertMatches(doc.paths['/health'].get.responses['200'].content['application/json'].schema, health.body)
    const error = doc.components.schemas.Error
    const errors = [
      await app.request('GET', '/v1/orders'),
      await tenant.request('GET', '/v1/orders?colour=red'),
      await tenant.request('POST', '/v1/orders', { body: orderBody({ total: 1 }) }),
      await app.request('GET', '/v1/openapi.json?x=1'),
    ]
    assert.deepEqual(errors.map((r) => r.status), [401, 400, 422, 400])
    for (const reply of errors) _assertMatches(error, reply.body)
  })
})

function _assertMatches(schema: object, value: unknown): void {
  const validate = ajv.compile(schema)
  assert.ok(validate(value), `${JSON.stringify(validate.errors)} for ${JSON.stringify(value)}`)
}

/** Every `schema` of a parameter or media type, and every component schema. */
function _collectSchemas(node: unknown, out: object[] = []): object[] {
  if (Array.isArray(node)) for (const n of node) _collectSchemas(n, out)
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'schema' && value && typeof value === 'object' && !('$ref' in value)) out.push(value)
      else if (key === 'schemas' && value && typeof value === 'object') out.push(...(Object.values(value) as object[]))
      else _collectSchemas(value, out)
    }
  }
  return out
}
