import type * as v from 'valibot'
import { idPattern } from '../lib/ids.ts'
import type { RouteDef } from './define-route.ts'
import { exampleOf } from './openapi-examples.ts'
import { INFO_CONTACT, INFO_LICENSE, operationDescription, SERVERS, TAG_DESCRIPTIONS } from './openapi-docs.ts'
import { componentRef, ERROR_RESPONSES, namedSchemas, sharedComponents, toComponentSchemas, toQuerySchemas, toSchema, type JsonObject, type NamedSchemas } from './openapi-schema.ts'
import { pageQuery } from './pagination.ts'
import { DELIVERY_HEADERS, webhooksSection, type EventExample } from './openapi-webhooks.ts'
import { describeScope } from '../lib/scopes.ts'

/** The events sent to receivers: their body's schema (named Event) and an example record per event. */
export interface OpenApiEvents {
  schema: v.GenericSchema
  example: EventExample
}

/**
 * The OpenAPI 3.1 document of these routes, generated from the very valibot schemas that
 * validate requests (bodies, query strings, path ids), so it cannot drift from what the API
 * accepts. Every route appears; a route without a `response` schema is shown with a generic
 * object as its `data` (DELETE: `{ id, deleted }`). Response schemas named with `v.title` are
 * `components.schemas` and referred to by `$ref`. Given the events (`EventView` and the example records), the
 * `webhooks` section describes what is sent to receivers; the prose (tags, operation descriptions, contact) is in openapi-docs.ts.
 */
export function buildOpenApi(routes: readonly RouteDef[], version: string, events?: OpenApiEvents): OpenApiDocument {
  const paths: Record<string, JsonObject> = {}
  const tags: string[] = []
  const operationIds = new Set<string>()
  const named = namedSchemas([...routes.flatMap((r) => (r.response ? [r.response] : [])), ...(events ? [events.schema] : [])])
  if (events && named.Event !== events.schema) throw new Error('OpenAPI: the event schema must be named Event (v.title)')
  if (named.Error) throw new Error('OpenAPI: the name Error is taken by the error shape')
  for (const route of routes) {
    const op = _operation(route, named)
    if (operationIds.has(op.operationId)) throw new Error(`OpenAPI: operationId ${op.operationId} is used twice (${route.method} ${route.path})`)
    operationIds.add(op.operationId)
    if (!tags.includes(route.tag)) tags.push(route.tag)
    const path = toOpenApiPath(route.path)
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: op }
  }
  const components = sharedComponents(toComponentSchemas(named))
  if (events) {
    components.parameters = { ...(components.parameters as JsonObject), ...DELIVERY_HEADERS }
    if (!tags.includes('Events')) tags.push('Events')
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'travelops',
      version,
      contact: INFO_CONTACT,
      license: INFO_LICENSE,
      description: 'Multi-tenant REST API for travel operators. Authenticate with `Authorization: Bearer <key>`. '
        + 'Successful answers wrap the payload in `{ "data": … }`; lists add `has_more` and `next_cursor`; '
        + 'errors are `{ "error": { code, message, details, request_id } }`.',
    },
    servers: SERVERS,
    tags: tags.map((name) => (TAG_DESCRIPTIONS[name] ? { name, description: TAG_DESCRIPTIONS[name] } : { name })),
    paths,
    ...(events ? { webhooks: webhooksSection(events.example) } : {}),
    components,
  }
}

export type OpenApiDocument = {
  openapi: string
  info: JsonObject & { title: string; version: string }
  servers: JsonObject[]
  tags: JsonObject[]
  paths: Record<string, JsonObject>
  /** What receivers get, when `buildOpenApi` is given the event schema. */
  webhooks?: Record<string, JsonObject>
  components: JsonObject
}

/** `/v1/orders/:id` → `/v1/orders/{id}` */
export function toOpenApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}')
}

function _operation(route: RouteDef, named: NamedSchemas): JsonObject & { operationId: string } {
  const authenticated = route.scope !== 'public'
  const op: JsonObject & { operationId: string } = {
    operationId: _operationId(route),
    summary: route.summary,
    description: operationDescription(route),
    tags: [route.tag],
    security: !authenticated ? [] : route.scope === 'session' || route.scope === 'operator' ? [{ dashboardSession: [] }] : [{ bearerAuth: [] }],
  }
  if (route.scope !== 'public') op['x-required-scope'] = describeScope(route.scope)
  if (route.events?.length) op['x-events'] = [...route.events]
  const parameters = [..._pathParameters(route), ..._queryParameters(route)]
  if (route.method === 'POST') parameters.push(componentRef('parameters', 'IdempotencyKey'))
  if (parameters.length) op.parameters = parameters
  if (route.body) op.requestBody = _requestBody(route)
  op.responses = _responses(route, authenticated, named)
  return op
}

/** `listOrders`, `postOrdersByIdConfirm`, `getHealth`: the verb, then the path's words. */
function _operationId(route: RouteDef): string {
  const words = route.path.split('/')
    .filter((s) => s && s !== 'v1')
    .flatMap((s) => (s.startsWith(':') ? ['by', s.slice(1)] : s.split(/[^A-Za-z0-9]+/)))
    .filter(Boolean)
  return (route.list ? 'list' : route.method.toLowerCase()) + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')
}

function _pathParameters(route: RouteDef): JsonObject[] {
  return [...route.path.matchAll(/:(\w+)/g)].map(([, name]) => {
    const rule = route.params?.[name!]
    const schema: JsonObject = { type: 'string' }
    let description: string | undefined
    if (typeof rule === 'string') {
      schema.pattern = idPattern(rule).source
      description = `An id starting with \`${rule}_\`; a malformed id answers 404 like an unknown one`
    } else if (rule) {
      schema.pattern = rule.pattern.source
      description = rule.description
    }
    return { name, in: 'path', required: true, ...(description ? { description } : {}), schema }
  })
}

function _queryParameters(route: RouteDef): JsonObject[] {
  const entries = { ...(route.list ? pageQuery : {}), ...route.query }
  if (Object.keys(entries).length === 0) return []
  return toQuerySchemas(entries).map(({ name, required, schema }) => {
    const documented = route.list && name === 'limit' ? _LIMIT : schema
    // A cursor is only ever one the previous page gave: it has no example of its own.
    return { name, in: 'query', required, schema: documented, ...(name === 'cursor' ? {} : { example: exampleOf(documented) }) }
  })
}

/** `limit` as the number it is (a query string is text on the wire; its schema describes the value). */
const _LIMIT: JsonObject = { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size, 1–100' }

function _requestBody(route: RouteDef): JsonObject {
  const schema = toSchema(route.body!, 'input')
  const readOnly = route.readOnly?.length ? `Read-only fields (${route.readOnly.join(', ')}) and unknown fields are refused with 422.` : undefined
  return {
    // `EmptyBody` (actions) is optional: no body or `{}`.
    required: route.body!.type !== 'optional' && route.body!.type !== 'nullish',
    ...(readOnly ? { description: readOnly } : {}),
    content: { 'application/json': { schema, example: exampleOf(schema) } },
  }
}

const GENERIC_OBJECT: JsonObject = { type: 'object' }
const DELETED: JsonObject = {
  type: 'object', required: ['id', 'deleted'], additionalProperties: false,
  properties: { id: { type: 'string' }, deleted: { const: true } },
}

function _responses(route: RouteDef, authenticated: boolean, named: NamedSchemas): JsonObject {
  const status = route.status ?? 200
  const item = route.response ? toSchema(route.response, 'output', named) : route.method === 'DELETE' ? DELETED : GENERIC_OBJECT
  const schema = route.raw ? item : route.list ? _page(item) : { type: 'object', required: ['data'], properties: { data: item } }
  const headers: JsonObject = { 'X-Request-ID': componentRef('headers', 'X-Request-ID') }
  if (authenticated) for (const h of ['X-Tenant-ID', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) headers[h] = componentRef('headers', h)
  if (route.method === 'POST') headers['Idempotent-Replayed'] = componentRef('headers', 'Idempotent-Replayed')
  // Server-Sent Events: text, one message per event (what each carries is the route's to say).
  const content = route.eventStream ? { 'text/event-stream': { schema: { type: 'string', description: route.eventStream } } } : { 'application/json': { schema } }
  const out: JsonObject = {
    [status]: { description: route.summary, headers, content },
  }
  for (const code of _errorStatuses(route, authenticated)) out[code] = componentRef('responses', ERROR_RESPONSES[code]![0])
  return out
}

function _page(item: JsonObject): JsonObject {
  return {
    type: 'object',
    required: ['data', 'has_more', 'next_cursor'],
    properties: {
      data: { type: 'array', items: item },
      has_more: { type: 'boolean' },
      next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; `null` on the last page' },
    },
  }
}

/** Which error answers a route can give (CONTRACT §4). */
function _errorStatuses(route: RouteDef, authenticated: boolean): number[] {
  const writes = route.method === 'POST' || route.method === 'PATCH'
  const codes = [400] // every route validates its query string; bodies can be malformed JSON
  if (authenticated) codes.push(401, 403)
  if (route.params || /:\w/.test(route.path)) codes.push(404)
  if (writes || route.method === 'DELETE') codes.push(409)
  if (writes) codes.push(413, 415)
  if (route.body) codes.push(422)
  if (authenticated) codes.push(429)
  return codes
}
