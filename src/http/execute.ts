import * as v from 'valibot'
import type { H3Event } from 'h3'
import type { TenantContext } from '../context.ts'
import { isId } from '../lib/ids.ts'
import { parseJson } from '../lib/json.ts'
import { readJsonBody, unstorableStrings } from './body.ts'
import { EventStreamBody } from '../lib/event-stream-body.ts'
import { JsonStream } from '../lib/json-stream.ts'
import type { RouteDef, RouteInput } from './define-route.ts'
import { asApiError, type ApiError, badRequest, issuesToDetails, notFound, validationFailed } from './errors.ts'
import { validateBody } from './validate.ts'
import { assertSameRequest, bodyFingerprint, checkIdempotencyKey, idempotent, type PartsResponse, type StoredResponse } from './idempotency.ts'
import { ID_PREFIXES, type IdPrefix } from '../lib/ids.ts'
import { pageJson, pageQueryFor } from './pagination.ts'
import { Rendered } from '../lib/rendered.ts'
import { Turns } from './turns.ts'

const _listTurns = new Turns(2)
/** A page this large marks its route heavy for _HEAVY_MS. */
const _HEAVY_PAGE_BYTES = 256 * 1024
const _HEAVY_MS = 10_000
const _heavySince = new WeakMap<RouteDef, number>()
const _heavy = (route: RouteDef) => {
  const since = _heavySince.get(route)
  return since !== undefined && Date.now() - since < _HEAVY_MS
}

export function errorJson(err: ApiError, requestId: string): string {
  return JSON.stringify({ error: { code: err.code, message: err.message, details: err.details ?? [], request_id: requestId } })
}

export interface Executed {
  status: number
  /** JSON text, its UTF-8 bytes (a large list page), or a stream of them (json-stream.ts). */
  body: string | Buffer | ReadableStream<Uint8Array>
  replayed: boolean
  headers?: Record<string, string>
}

/** Validates parameters, query and body of a matched route, runs its handler (once per Idempotency-Key) and renders the JSON. */
export async function executeRoute(route: RouteDef, event: H3Event, ctx: TenantContext, requestId: string): Promise<Executed> {
  const params = _params(route, event)
  const query = _query(route, event.url.searchParams, event.url.search)
  let body: unknown
  let fingerprint = ''
  const idemHeader = route.method === 'POST' ? event.req.headers.get('idempotency-key') : null
  const idemKey = idemHeader === null ? null : checkIdempotencyKey(idemHeader)
  if (route.method === 'POST' || route.method === 'PATCH') {
    const received = (await readJsonBody(event)).value
    if (idemKey !== null) {
      fingerprint = bodyFingerprint(received)
      // A reused key is a 409 even when this body would not validate.
      await assertSameRequest(ctx, ctx, idemKey, { method: route.method, path: event.url.pathname, fingerprint })
    }
    if (route.body) body = validateBody(route.body, received, _readOnly(route))
  }
  const responseHeaders: Record<string, string> = {}
  // `kept`: the answer is kept for an Idempotency-Key's replay, so a JsonStream gives its parts to be stored.
  const run = async (kept: boolean): Promise<{ status: number; body: Executed['body']; headers?: Record<string, string> } | PartsResponse> => {
    // Lists of large records are the heaviest answers (pages up to 4 MiB): while a route has
    // answered such pages lately, its lists take turns, so other requests are served between
    // them (CONTRACT §9: /health within 1 s under forty slow readers). Small pages never wait.
    // (The first wave, before the route is known to be heavy: db/page-rows.ts, one large page a turn.)
    const give = route.list && _heavy(route) ? await _listTurns.take() : undefined
    try {
      const result = await route.handler(new _Input(ctx, params, query, body, responseHeaders, event))
      if (result instanceof JsonStream) {
        if (kept) return { status: route.status ?? 200, parts: result.parts(!route.raw) }
        return { status: route.status ?? 200, body: result.stream(!route.raw, (err) => _streamFailed(ctx, requestId, err)), headers: responseHeaders }
      }
      if (result instanceof EventStreamBody) {
        return { status: 200, body: result.stream, headers: { ...responseHeaders, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' } }
      }
      if (result instanceof Rendered) return { status: route.status ?? 200, body: route.raw ? result.json : `{"data":${result.json}}`, headers: responseHeaders }
      if (!route.list) return { status: route.status ?? 200, body: JSON.stringify(route.raw ? result : { data: result }), headers: responseHeaders }
      const page = pageJson(result as object)
      if (page.length > _HEAVY_PAGE_BYTES) _heavySince.set(route, Date.now())
      return { status: route.status ?? 200, body: page }
    } catch (err) {
      const expected = asApiError(err)
      if (expected) return { status: expected.status, body: errorJson(expected, requestId), headers: expected.headers }
      throw err
    } finally {
      give?.()
    }
  }
  if (idemKey === null) return { ...(await run(false) as Exclude<Awaited<ReturnType<typeof run>>, PartsResponse>), replayed: false }
  // Only POST carries an Idempotency-Key, and no POST route is a list: its body is text, or a JsonStream's parts.
  return idempotent(ctx, ctx, idemKey, { method: route.method, path: event.url.pathname, fingerprint }, () => run(true) as Promise<StoredResponse | PartsResponse>, {
    toStored: route.secretFields ? (text) => _withoutSecrets(text, route.secretFields!) : undefined,
    onStreamError: (err) => _streamFailed(ctx, requestId, err),
  })
}

/** A streamed answer whose read failed after its status went out: the client's connection is cut, and the failure logged. */
function _streamFailed(ctx: TenantContext, requestId: string, err: unknown): void {
  ctx.logger.error('response stream failed', { request_id: requestId, error: String((err as Error)?.stack ?? err) })
}

/**
 * A handler's arguments. `request` is worked out only when a handler reads it, by a getter on the
 * prototype: an object literal with a getter of its own (a new closure per request) gave each
 * request's object a map of its own, and that map, in old space, kept the request's whole
 * object graph (the event, Node's request and response) alive through every young-generation
 * collection until the next full one, costing CPU and peak memory under load.
 */
class _Input implements RouteInput<unknown, unknown> {
  readonly ctx: TenantContext
  readonly params: Record<string, string>
  readonly query: unknown
  readonly body: unknown
  readonly responseHeaders: Record<string, string>
  private readonly _event: H3Event

  constructor(ctx: TenantContext, params: Record<string, string>, query: unknown, body: unknown,
    responseHeaders: Record<string, string>, event: H3Event) {
    this.ctx = ctx
    this.params = params
    this.query = query
    this.body = body
    this.responseHeaders = responseHeaders
    this._event = event
  }

  get request(): { origin: string; secure: boolean } {
    return _request(this._event)
  }

  get headers(): Headers {
    return this._event.req.headers
  }
}

function _request(event: H3Event): { origin: string; secure: boolean } {
  const forwarded = event.req.headers.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase()
  const scheme = forwarded === 'https' || forwarded === 'http' ? forwarded : event.url.protocol.replace(':', '')
  return { origin: `${scheme}://${event.url.host}`, secure: scheme === 'https' }
}

function _params(route: RouteDef, event: H3Event): Record<string, string> {
  const params = (event.context.params ?? {}) as Record<string, string>
  for (const [name, rule] of Object.entries(route.params ?? {})) {
    const value = params[name]
    const ok = typeof rule === 'string' ? isId(rule, value) : typeof value === 'string' && rule.pattern.test(value)
    if (!ok) throw notFound()
  }
  return params
}

function _query(route: RouteDef, search: URLSearchParams, text: string): unknown {
  // No prototype: `?constructor=1` is an unknown parameter, not one given twice, and `?__proto__=` is kept.
  const raw: Record<string, string> = Object.create(null)
  for (const [k, val] of search) {
    if (Object.hasOwn(raw, k)) throw badRequest(`Query parameter '${k}' is given more than once`, [{ path: k, message: 'given more than once' }])
    raw[k] = val
  }
  // A query decodes a bad UTF-8 sequence to U+FFFD, so only `%00` can give a string no database stores (CONTRACT §16).
  if (text.includes('%00')) {
    const bad = unstorableStrings(raw)
    if (bad.length > 0) throw validationFailed(bad)
  }
  const r = v.safeParse(_querySchema(route), raw, { abortEarly: false })
  if (!r.success) {
    const details = issuesToDetails(r.issues).map((d) => d.message.startsWith('unknown field')
      ? { path: d.path, message: `unknown query parameter '${d.path}'` } : d)
    throw badRequest(`Invalid query: ${details[0]!.path}: ${details[0]!.message}`, details)
  }
  return r.output
}

const _buildQuerySchema = (route: RouteDef) => {
  const entries: v.ObjectEntries = { ...(route.list ? pageQueryFor(_listPrefix(route)) : {}), ...route.query }
  return v.strictObject(entries)
}

/**
 * The id prefix of a list's records, read from its response schema's `id` (view-fields.ts id()): a cursor must name one.
 * A variant (events: a branch per resource) is read from its first branch.
 */
function _listPrefix(route: RouteDef): IdPrefix | undefined {
  type _Schema = { pipe?: unknown[]; entries?: Record<string, v.GenericSchema>; options?: _Schema[] }
  const schema = route.response as _Schema | undefined
  const object = (schema?.pipe?.[0] as _Schema | undefined) ?? schema
  const entries = object?.entries ?? object?.options?.[0]?.entries
  const id = entries?.id
  if (!id) return undefined
  const matching = ID_PREFIXES.filter((p) => v.is(id, `${p}_01900000-0000-7000-8000-000000000000`))
  return matching.length === 1 ? matching[0] : undefined
}
const _querySchemas = new WeakMap<RouteDef, ReturnType<typeof _buildQuerySchema>>()

/** The route's query schema, built once per route. */
function _querySchema(route: RouteDef): ReturnType<typeof _buildQuerySchema> {
  let schema = _querySchemas.get(route)
  if (!schema) {
    schema = _buildQuerySchema(route)
    _querySchemas.set(route, schema)
  }
  return schema
}

const _readOnlySets = new WeakMap<RouteDef, ReadonlySet<string>>()

function _readOnly(route: RouteDef): ReadonlySet<string> {
  let set = _readOnlySets.get(route)
  if (!set) _readOnlySets.set(route, (set = new Set(route.readOnly)))
  return set
}

/** A response body with the route's secret fields of `data` set to null (what a replay may show). */
function _withoutSecrets(text: string, fields: readonly string[]): string {
  const body = parseJson(text) as { data?: Record<string, unknown> }
  if (body.data && typeof body.data === 'object') for (const f of fields) if (f in body.data) body.data[f] = null
  return JSON.stringify(body)
}
