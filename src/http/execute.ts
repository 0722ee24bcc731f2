import * as v from 'valibot'
import type { H3Event } from 'h3'
import type { TenantContext } from '../context.ts'
import { isId } from '../lib/ids.ts'
import { readJsonBody } from './body.ts'
import type { RouteDef } from './define-route.ts'
import { ApiError, badRequest, issuesToDetails, notFound } from './errors.ts'
import { validateBody } from './validate.ts'
import { assertSameRequest, bodyFingerprint, checkIdempotencyKey, idempotent, type StoredResponse } from './idempotency.ts'
import { pageQuery } from './pagination.ts'

export function errorJson(err: ApiError, requestId: string): string {
  return JSON.stringify({ error: { code: err.code, message: err.message, details: err.details ?? [], request_id: requestId } })
}

export interface Executed extends StoredResponse {
  replayed: boolean
}

/** Validates parameters, query and body of a matched route, runs its handler (once per Idempotency-Key) and renders the JSON. */
export async function executeRoute(route: RouteDef, event: H3Event, ctx: TenantContext, requestId: string): Promise<Executed> {
  const params = _params(route, event)
  const query = _query(route, event.url.searchParams)
  let body: unknown
  let fingerprint = ''
  const idemHeader = route.method === 'POST' ? event.req.headers.get('idempotency-key') : null
  const idemKey = idemHeader === null ? null : checkIdempotencyKey(idemHeader)
  if (route.method === 'POST' || route.method === 'PATCH') {
    const raw = await readJsonBody(event)
    fingerprint = bodyFingerprint(raw.value)
    // A reused key is a 409 even when this body would not validate.
    if (idemKey !== null) await assertSameRequest(ctx, ctx, idemKey, { method: route.method, path: event.url.pathname, fingerprint })
    if (route.body) body = validateBody(route.body, raw.value, new Set(route.readOnly))
  }
  const run = async (): Promise<StoredResponse> => {
    try {
      const result = await route.handler({ ctx, params, query, body })
      return { status: route.status ?? 200, body: JSON.stringify(route.list || route.raw ? result : { data: result }) }
    } catch (err) {
      if (err instanceof ApiError) return { status: err.status, body: errorJson(err, requestId) }
      throw err
    }
  }
  if (idemKey === null) return { ...(await run()), replayed: false }
  return idempotent(ctx, ctx, idemKey, { method: route.method, path: event.url.pathname, fingerprint }, run)
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

function _query(route: RouteDef, search: URLSearchParams): unknown {
  // No prototype: `?constructor=1` is an unknown parameter, not one given twice, and `?__proto__=` is kept.
  const raw: Record<string, string> = Object.create(null)
  for (const [k, val] of search) {
    if (Object.hasOwn(raw, k)) throw badRequest(`Query parameter '${k}' is given more than once`, [{ path: k, message: 'given more than once' }])
    raw[k] = val
  }
  const entries: v.ObjectEntries = { ...(route.list ? pageQuery : {}), ...route.query }
  const schema = v.strictObject(entries)
  const r = v.safeParse(schema, raw, { abortEarly: false })
  if (!r.success) {
    const details = issuesToDetails(r.issues).map((d) => d.message.startsWith('unknown field')
      ? { path: d.path, message: `unknown query parameter '${d.path}'` } : d)
    throw badRequest(`Invalid query: ${details[0]!.path}: ${details[0]!.message}`, details)
  }
  return r.output
}
