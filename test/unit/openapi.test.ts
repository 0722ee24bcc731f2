import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import * as v from 'valibot'
import { defineRoute, EmptyBody, type RouteDef } from '../../src/http/define-route.ts'
import { buildOpenApi, toOpenApiPath } from '../../src/http/openapi.ts'
import { BoolQuery, CalendarDate, TimestampQuery } from '../../src/modules/fields.ts'

const write = { resource: 'content', action: 'write' } as const
const read = { resource: 'content', action: 'read' } as const
const handler = async () => ({})
const params = { entity: { pattern: /^[a-z][a-z0-9_-]{0,49}$/, description: 'The kind of content' }, id: 'cnt' } as const

/** Routes using what JSON Schema cannot say: transforms, checks, custom schemas. */
const routes: RouteDef[] = [
  defineRoute({
    method: 'GET', path: '/v1/content/:entity', scope: read, tag: 'Content', summary: 'List', list: true, params: { entity: params.entity },
    query: { active: v.optional(BoolQuery), since: v.optional(TimestampQuery) },
    response: v.object({ id: v.string(), size: v.pipe(v.string(), v.transform(Number), v.number()) }),
    handler: async () => ({ data: [], has_more: false, next_cursor: null }),
  }),
  defineRoute({
    method: 'POST', path: '/v1/content/:entity', scope: write, tag: 'Content', summary: 'Create', status: 201, params: { entity: params.entity },
    body: v.strictObject({
      count: v.pipe(v.string(), v.transform(Number), v.number()),
      date: CalendarDate,
      anything: v.custom<string>((x) => typeof x === 'string'),
      when: v.optional(v.date()),
    }),
    handler,
  }),
  defineRoute({ method: 'GET', path: '/v1/content/:entity/:id', scope: read, tag: 'Content', summary: 'Read', params, handler }),
  defineRoute({ method: 'DELETE', path: '/v1/content/:entity/:id', scope: write, tag: 'Content', summary: 'Delete', params, handler }),
  defineRoute({ method: 'POST', path: '/v1/content/:entity/:id/publish', scope: write, tag: 'Content', summary: 'Publish', params, body: EmptyBody, handler }),
  defineRoute({ method: 'GET', path: '/ping', scope: 'public', tag: 'System', summary: 'Ping', raw: true, handler }),
]

const doc: any = buildOpenApi(routes, '9.9.9')
const op = (method: string, path: string) => doc.paths[toOpenApiPath(path)][method]

test('schemas JSON Schema cannot fully express convert without failing, into a valid document', async () => {
  const result = await new Validator().validate(structuredClone(doc))
  assert.equal(result.valid, true, JSON.stringify(result.errors))
  assert.equal(doc.info.version, '9.9.9')
  const body = op('post', '/v1/content/:entity').requestBody.content['application/json'].schema
  assert.deepEqual(body.properties.count, { type: 'string' }, 'a request field is shown as the input before its transform')
  assert.equal(body.properties.date.type, 'string')
  assert.equal(body.properties.date.format, 'date', 'a check documented() with its keywords has them')
  assert.match(body.properties.date.description, /Calendar date `YYYY-MM-DD`/)
  assert.deepEqual(body.required.sort(), ['anything', 'count', 'date'])
  const item = op('get', '/v1/content/:entity').responses['200'].content['application/json'].schema.properties.data.items
  assert.deepEqual(item.properties.size, { type: 'number' }, 'a response field is shown as the output')
})

test('paths, parameters and query strings', () => {
  assert.deepEqual(Object.keys(doc.paths), ['/v1/content/{entity}', '/v1/content/{entity}/{id}', '/v1/content/{entity}/{id}/publish', '/ping'])
  const [entity, id] = op('get', '/v1/content/:entity/:id').parameters
  assert.deepEqual(entity, { name: 'entity', in: 'path', required: true, description: 'The kind of content', schema: { type: 'string', pattern: '^[a-z][a-z0-9_-]{0,49}$' } })
  assert.equal(id.schema.pattern, '^cnt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')
  const query = op('get', '/v1/content/:entity').parameters.filter((p: any) => p.in === 'query')
  assert.deepEqual(query.map((p: any) => p.name), ['limit', 'cursor', 'active', 'since'])
  assert.deepEqual(query.find((p: any) => p.name === 'active').schema, { type: 'string', enum: ['true', 'false'] })
  assert.ok(query.every((p: any) => p.required === false))
  assert.deepEqual(op('post', '/v1/content/:entity').parameters.at(-1), { $ref: '#/components/parameters/IdempotencyKey' })
})

test('success shapes: list page, data envelope, DELETE, raw', () => {
  const schemaOf = (method: string, path: string, status: string) => op(method, path).responses[status].content['application/json'].schema
  assert.deepEqual(schemaOf('get', '/v1/content/:entity', '200').required, ['data', 'has_more', 'next_cursor'])
  assert.deepEqual(schemaOf('post', '/v1/content/:entity', '201'), { type: 'object', required: ['data'], properties: { data: { type: 'object' } } })
  assert.deepEqual(schemaOf('delete', '/v1/content/:entity/:id', '200').properties.data.properties.deleted, { const: true })
  assert.deepEqual(schemaOf('get', '/ping', '200'), { type: 'object' })
  assert.equal(op('post', '/v1/content/:entity/:id/publish').requestBody.required, false, 'actions take no body or {}')
})

test('error answers per route', () => {
  const statuses = (method: string, path: string) => Object.keys(op(method, path).responses)
  assert.deepEqual(statuses('get', '/v1/content/:entity'), ['200', '400', '401', '403', '404', '429'])
  assert.deepEqual(statuses('post', '/v1/content/:entity'), ['201', '400', '401', '403', '404', '409', '413', '415', '422', '429'])
  assert.deepEqual(statuses('delete', '/v1/content/:entity/:id'), ['200', '400', '401', '403', '404', '409', '429'])
  assert.deepEqual(statuses('get', '/ping'), ['200', '400'])
  assert.deepEqual(op('get', '/ping').security, [])
  assert.equal(op('delete', '/v1/content/:entity/:id')['x-required-scope'], 'content:write')
  assert.deepEqual(doc.components.responses.ValidationFailed.content['application/json'].schema, { $ref: '#/components/schemas/Error' })
})

test('two routes that would share an operationId fail loudly', () => {
  const clash = [
    defineRoute({ method: 'GET', path: '/v1/a-b', scope: 'public', tag: 'X', summary: 'x', handler }),
    defineRoute({ method: 'GET', path: '/v1/a/b', scope: 'public', tag: 'X', summary: 'y', handler }),
  ]
  assert.throws(() => buildOpenApi(clash, '1.0.0'), /operationId getAB/)
})

test('response schemas named with v.title are components, referred to wherever they appear', async () => {
  const Place = v.pipe(v.strictObject({ city: v.string() }), v.title('Place'))
  const Trip = v.pipe(v.strictObject({ id: v.string(), from: Place, to: v.nullable(Place) }), v.title('Trip'))
  const trips: RouteDef[] = [
    defineRoute({ method: 'GET', path: '/v1/trips', scope: read, tag: 'Trips', summary: 'List', list: true, response: Trip,
      handler: async () => ({ data: [], has_more: false, next_cursor: null }) }),
    defineRoute({ method: 'GET', path: '/v1/trips/:id', scope: read, tag: 'Trips', summary: 'Read', params: { id: 'cnt' }, response: Trip,
      handler: async () => ({ id: 'x', from: { city: 'Oslo' }, to: null }) }),
    defineRoute({ method: 'GET', path: '/v1/places', scope: read, tag: 'Trips', summary: 'Places', response: v.array(Place), handler: async () => [] }),
  ]
  const d: any = buildOpenApi(trips, '1.0.0')
  assert.equal((await new Validator().validate(structuredClone(d))).valid, true)
  assert.deepEqual(Object.keys(d.components.schemas).sort(), ['Error', 'Place', 'Trip'])
  const trip = d.components.schemas.Trip
  assert.equal(trip.title, 'Trip')
  assert.equal(trip.additionalProperties, false)
  assert.deepEqual(trip.properties.from, { $ref: '#/components/schemas/Place' })
  assert.deepEqual(trip.properties.to, { anyOf: [{ $ref: '#/components/schemas/Place' }, { type: 'null' }] })
  const data = (path: string) => d.paths[path].get.responses['200'].content['application/json'].schema.properties.data
  assert.deepEqual(data('/v1/trips').items, { $ref: '#/components/schemas/Trip' })
  assert.deepEqual(data('/v1/trips/{id}'), { $ref: '#/components/schemas/Trip' })
  assert.deepEqual(data('/v1/places'), { type: 'array', items: { $ref: '#/components/schemas/Place' } })
})

test('a name given to two different schemas, or the name Error, fails loudly', () => {
  const route = (response: v.GenericSchema, path: string) =>
    defineRoute({ method: 'GET', path, scope: 'public', tag: 'X', summary: path, response, handler: async () => ({}) as never })
  const a = v.pipe(v.object({ a: v.string() }), v.title('Thing'))
  const b = v.pipe(v.object({ b: v.string() }), v.title('Thing'))
  assert.throws(() => buildOpenApi([route(a, '/a'), route(b, '/b')], '1.0.0'), /two different schemas are named Thing/)
  assert.throws(() => buildOpenApi([route(v.pipe(v.object({}), v.title('Error')), '/e')], '1.0.0'), /Error is taken/)
})
