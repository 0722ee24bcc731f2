import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig, type OverrideActionContext, type OverrideSchemaContext } from '@valibot/to-json-schema'
import * as v from 'valibot'
import { hintOf } from '../lib/schema-hints.ts'
import { DROPPED_KEYS } from './validate.ts'

/** A JSON value of the OpenAPI document (schemas, operations, components). */
export type JsonObject = { [key: string]: unknown }

/**
 * A valibot schema as a JSON Schema 2020-12 object (OpenAPI 3.1's dialect). Requests are
 * described by what the API accepts (`input`: a pipe is converted up to its first transform),
 * responses by what it sends (`output`). What JSON Schema cannot say (`v.check`, transforms)
 * never fails the conversion; a check's message becomes the description instead.
 */
export function toSchema(schema: v.GenericSchema, mode: 'input' | 'output', named?: NamedSchemas): JsonObject {
  const name = named && Object.keys(named).find((key) => named[key] === schema)
  if (name) return componentRef('schemas', name)
  const { $schema: _, $defs: __, ...json } = toJsonSchema(schema, { ...CONVERSION, typeMode: mode, ...(named ? { definitions: named, overrideRef: _componentRef } : {}) }) as JsonObject
  return json
}

/** Response schemas by their `v.title`: each is converted once into `components.schemas` and referred to from everywhere else. */
export type NamedSchemas = Record<string, v.GenericSchema>

/** Every schema with a `v.title(name)` in its pipe, inside `roots` at any depth; one name for two different schemas throws. */
export function namedSchemas(roots: readonly v.GenericSchema[]): NamedSchemas {
  const named: NamedSchemas = {}
  const seen = new Set<unknown>()
  const visit = (node: unknown): void => {
    if (!_isSchema(node) || seen.has(node)) return
    seen.add(node)
    const pipe = (node as { pipe?: readonly { type: string; title?: string }[] }).pipe
    const title = pipe?.find((a) => a.type === 'title')?.title
    if (title !== undefined) {
      if (named[title] && named[title] !== node) throw new Error(`OpenAPI: two different schemas are named ${title}`)
      named[title] = node
    }
    const { pipe: items, entries, item, wrapped, options, value } = node as unknown as Record<string, unknown>
    for (const child of [items, entries && Object.values(entries), item, wrapped, options, value].flat()) if (child !== node) visit(child)
  }
  for (const root of roots) visit(root)
  return named
}

/** `components.schemas` for the named response schemas (output form). */
export function toComponentSchemas(named: NamedSchemas): Record<string, JsonObject> {
  return toJsonSchemaDefs(named, { ...CONVERSION, typeMode: 'output', overrideRef: _componentRef }) as Record<string, JsonObject>
}

const _componentRef = ({ referenceId }: { referenceId: string }) => `#/components/schemas/${referenceId}`

const _isSchema = (x: unknown): x is v.GenericSchema => typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'schema'

/** Query entries (all string-valued) → one schema per parameter and whether it is required. */
export function toQuerySchemas(entries: v.ObjectEntries): { name: string; required: boolean; schema: JsonObject }[] {
  const json = toSchema(v.object(entries), 'input')
  const properties = (json.properties ?? {}) as Record<string, JsonObject>
  const required = new Set((json.required ?? []) as string[])
  return Object.entries(properties).map(([name, schema]) => ({ name, required: required.has(name), schema }))
}

const CONVERSION: ConversionConfig = {
  target: 'draft-2020-12',
  errorMode: 'ignore',
  overrideAction: _describeCheck,
  overrideSchema: _recordKeys,
}

/** A record (metadata, headers) refuses the keys JavaScript objects cannot hold as data (http/validate.ts). */
function _recordKeys({ valibotSchema, jsonSchema }: OverrideSchemaContext): JsonObject | undefined {
  if (valibotSchema.type !== 'record') return undefined
  const names = (jsonSchema.propertyNames ?? {}) as JsonObject
  return { ...jsonSchema, propertyNames: { ...names, not: names.not ? { anyOf: [names.not, { enum: [...DROPPED_KEYS] }] } : { enum: [...DROPPED_KEYS] } } } as JsonObject
}

/** Marks a string schema whose pipe trims (a symbol: never part of the JSON). */
const _TRIMMED = Symbol('trimmed')

/**
 * `v.check(fn, 'must be …')` has no JSON Schema form of its own: the keywords `documented()`
 * noted for it (lib/schema-hints.ts), else its message in words. `v.trim()` then a length or
 * pattern: what is checked is the trimmed text, so a text that must not be empty must hold a
 * character other than whitespace (`pattern: \S`, replaced by any later `v.regex`).
 */
function _describeCheck({ valibotAction, jsonSchema }: OverrideActionContext): JsonObject | undefined {
  const hint = hintOf(valibotAction)
  // The field's own words and examples, given before the check, win over the check's.
  if (hint) return { ...jsonSchema, ...hint, ...(jsonSchema.description ? { description: jsonSchema.description } : {}), ...(jsonSchema.examples ? { examples: jsonSchema.examples } : {}) }
  if (valibotAction.type === 'trim') {
    const trimmed = 'Leading and trailing whitespace is removed before the rules apply'
    return { ...jsonSchema, [_TRIMMED]: true, description: jsonSchema.description ? `${jsonSchema.description}; ${trimmed}` : trimmed }
  }
  if (valibotAction.type === 'min_length' && (jsonSchema as { [_TRIMMED]?: boolean })[_TRIMMED] && !jsonSchema.pattern) return { ...jsonSchema, pattern: '\\S' }
  const message: unknown = (valibotAction as { message?: unknown }).message
  if (valibotAction.type !== 'check' || typeof message !== 'string') return undefined
  const said = message.charAt(0).toUpperCase() + message.slice(1)
  return { ...jsonSchema, description: jsonSchema.description ? `${jsonSchema.description}; ${message}` : said }
}

/** `{ $ref: '#/components/<kind>/<name>' }` */
export const componentRef = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` })

/** CONTRACT §4: the one error shape every 4xx and 5xx answer has. */
const ERROR_SCHEMA: JsonObject = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'details', 'request_id'],
      additionalProperties: false,
      properties: {
        code: { type: 'string', description: 'Stable machine-readable code, e.g. `validation_failed`, `not_found`, `conflict`, `idempotency_conflict`' },
        message: { type: 'string', description: 'Human-readable; names the first problem' },
        details: {
          type: 'array',
          items: {
            type: 'object',
            required: ['path', 'message'],
            additionalProperties: false,
            properties: {
              path: { type: 'string', description: 'Dots for properties, brackets for indexes: `items[1].quantity`' },
              message: { type: 'string' },
            },
          },
        },
        request_id: { type: 'string', pattern: '^req_' },
      },
    },
  },
}

const HEADERS: JsonObject = {
  'X-Request-ID': { description: 'Id of this request (`req_…`), also in every error body', schema: { type: 'string' } },
  'X-Tenant-ID': { description: 'The tenant of the API key', schema: { type: 'string' } },
  'X-RateLimit-Limit': { description: 'Requests allowed per hour for this key', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { description: 'Unix time (seconds) when the window resets', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds until the key may send requests again', schema: { type: 'integer' } },
  'Idempotent-Replayed': { description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
}

/** Error answers by status: the component name and when it happens. */
export const ERROR_RESPONSES: Record<number, [name: string, description: string]> = {
  400: ['BadRequest', 'Malformed JSON, or an unknown or invalid query parameter (`bad_request`)'],
  401: ['Unauthenticated', 'Missing, malformed, unknown, revoked or expired API key (`unauthenticated`)'],
  403: ['Forbidden', 'The API key lacks the required scope, which the message names (`forbidden`)'],
  404: ['NotFound', 'Unknown id, malformed id, or an id of another tenant (`not_found`)'],
  409: ['Conflict', 'Illegal state transition or duplicate (`conflict`), or an Idempotency-Key reused with another body or path (`idempotency_conflict`)'],
  413: ['PayloadTooLarge', 'Body over 1 MiB (`payload_too_large`)'],
  415: ['UnsupportedMediaType', 'Body that is not `application/json` (`unsupported_media_type`)'],
  422: ['ValidationFailed', 'The body fails validation; `details` lists every problem with its path (`validation_failed`)'],
  429: ['RateLimited', 'Over the key\'s hourly limit (`rate_limited`); `Retry-After` says when to try again'],
}

/** `components` of the document: the error shape and the named response schemas, the error responses, headers, bearer auth, Idempotency-Key. */
export function sharedComponents(schemas: Record<string, JsonObject> = {}): JsonObject {
  const errorBody = { 'application/json': { schema: componentRef('schemas', 'Error') } }
  const responses: JsonObject = {}
  for (const [status, [name, description]] of Object.entries(ERROR_RESPONSES)) {
    const headers: JsonObject = { 'X-Request-ID': componentRef('headers', 'X-Request-ID') }
    if (status === '429') for (const h of ['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) headers[h] = componentRef('headers', h)
    responses[name] = { description, headers, content: errorBody }
  }
  return {
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer <key>`. Keys are created with `travelops keys create`.' },
      dashboardSession: {
        type: 'apiKey', in: 'cookie', name: 'travelops_session',
        description: 'The dashboard\'s session (HttpOnly, SameSite=Strict), opened by `POST /v1/dashboard/sessions` with a sign-in link\'s token. ' +
          'Every request with it must come from the dashboard\'s own origin and carry `X-Requested-With: travelops-dashboard`. It also works on every ' +
          'route that takes an API key, with the scope `*` of its tenant; the operator\'s session names the tenant with `X-Travelops-Tenant`.',
      },
    },
    schemas: { Error: ERROR_SCHEMA, ...schemas },
    responses,
    headers: HEADERS,
    parameters: {
      IdempotencyKey: {
        name: 'Idempotency-Key', in: 'header', required: false,
        description: 'Makes a POST safe to retry: the first response is stored for 24 h and replayed for the same key and body',
        schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
      },
    },
  }
}
