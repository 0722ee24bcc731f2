import { H3, type H3Event } from 'h3'
import { FastResponse } from 'srvx'
import type { AppDeps, TenantContext } from './context.ts'
import { authenticate, authenticateSession, cookieValue, type Caller } from './auth.ts'
import { SESSION_COOKIE } from './modules/dashboard/index.ts'
import { serveDashboard } from './pages/dashboard-serve.ts'
import { serveReference } from './pages/reference-serve.ts'
import { rootIndex } from './http/root-index.ts'
import type { Method, RouteDef } from './http/define-route.ts'
import { ApiError, asApiError, badRequest, forbidden, notFound } from './http/errors.ts'
import { errorJson, executeRoute, type Executed } from './http/execute.ts'
import { RateLimiter, type Limiter, type RateDecision } from './lib/rate-window.ts'
import { allows, describeScope, tenantScoped } from './lib/scopes.ts'
import { newId } from './lib/ids.ts'
import { API_SECURITY_HEADERS as SECURITY_HEADERS } from './http/security-headers.ts'
import { allRoutes } from './routes.ts'

export interface App {
  h3: H3
  routes: readonly RouteDef[]
  fetch(request: Request): Promise<Response>
  /** Serve is stopping: gives back what the shared rate limiter holds (PostgreSQL). */
  close(): Promise<void>
}

interface RequestState {
  requestId: string
  caller?: Caller
  rate?: RateDecision
}

/** A response before the standard headers are added. */
interface Out {
  status: number
  body: Executed['body']
  headers?: Record<string, string>
}

const JSON_TYPE = 'application/json; charset=utf-8'
const _BUFFER_BODY_CHARS = 64 * 1024

/**
 * The HTTP application. Routes are data (see define-route.ts); one global middleware runs
 * for every request: request id, 404/405, authentication, rate limit, the route's scope
 * (fail closed), error rendering, standard headers and one log line.
 */
export function createApp(deps: AppDeps, routes: readonly RouteDef[] = allRoutes(deps)): App {
  // Malformed escapes (/%ZZ) reach the guard, which answers 400 in the contract's shape.
  const app = new H3({ allowMalformedURL: true })
  // The engine's: shared by every process of a PostgreSQL database (CONTRACT §10), in memory on SQLite.
  const keyLimiter = deps.engine.rateLimiter()
  const limiters = {
    keys: keyLimiter as Limiter,
    // Dashboard sessions are counted by each process on its own (CONTRACT §14 sets no limit for them).
    sessions: new RateLimiter() as Limiter,
  }

  app.use(async (event) => {
    const started = performance.now()
    const head = event.req.method === 'HEAD'
    if (deps.metrics && event.url.pathname === '/metrics' && (head || event.req.method === 'GET')) {
      const m = await deps.metrics.render()
      const headers = { 'content-type': m.contentType, 'cache-control': 'no-store', ...SECURITY_HEADERS }
      return head ? _bodiless(200, headers, m.body) : new FastResponse(m.body, { status: 200, headers })
    }
    if (event.url.pathname === '/docs' || event.url.pathname.startsWith('/docs/')) return serveReference(event, deps)
    if (deps.config.dashboard && (event.url.pathname === '/dashboard' || event.url.pathname.startsWith('/dashboard/'))) {
      return serveDashboard(event, deps)
    }
    const state: RequestState = { requestId: newId('req') }
    let out: Out
    try {
      out = await _guard(event, state, deps, limiters)
    } catch (err) {
      // The client went away mid-request (e.g. half a body): nobody to answer, nothing broken.
      out = event.req.signal?.aborted ? { status: 499, body: '' } : _errorOut(err, state, deps, event)
    }
    if (event.req.signal?.aborted) out = { ...out, status: 499 }
    const headers = _headers(out, state)
    if (deps.metrics) {
      const meta = event.context.matchedRoute?.meta as { route?: RouteDef } | undefined
      const label = meta?.route?.path ?? event.context.matchedRoute?.route ?? (event.url.pathname === '/' ? '/' : 'unmatched')
      deps.metrics.request(event.req.method, label, out.status, (performance.now() - started) / 1000)
    }
    deps.logger.info('request', {
      request_id: state.requestId, method: event.req.method, path: event.url.pathname, status: out.status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      tenant_id: state.caller?.tenantId, key_id: state.caller?.keyId,
    })
    // srvx's response (what h3 itself answers with): on node:http its string body and plain
    // headers object go out in one write with Content-Length; a fetch Response would be
    // streamed (chunked, two writes) and its Headers built and read back.
    // A large body goes out as UTF-8 bytes made once: a string would be held (as UTF-16 when it
    // has non-Latin-1 text) while a slow reader drains its socket, and encoded again meanwhile.
    if (head) return _bodiless(out.status, headers, out.body)
    const body = typeof out.body === 'string' && out.body.length > _BUFFER_BODY_CHARS ? Buffer.from(out.body) : out.body
    return new FastResponse(body, { status: out.status, headers })
  })

  const byPath = new Map<string, Method[]>()
  for (const route of routes) {
    if (route.scope === undefined) throw new Error(`route ${route.method} ${route.path} declares no scope`)
    const methods = byPath.get(route.path) ?? []
    if (methods.includes(route.method)) throw new Error(`route ${route.method} ${route.path} is defined twice`)
    byPath.set(route.path, [...methods, route.method])
    // The route runs in the middleware above, after the guard; h3 only matches it.
    app.on(route.method, route.path, () => undefined, { meta: { route } })
    // HEAD is GET without the body (CONTRACT §16): the same route, guard and headers; see _bodiless().
    if (route.method === 'GET') app.on('HEAD', route.path, () => undefined, { meta: { route } })
  }
  // Any other method on a known path: 405 with Allow.
  for (const [path, methods] of byPath) app.all(path, () => undefined, { meta: { allow: _allow(methods) } })

  return {
    h3: app, routes, fetch: (req) => Promise.resolve(app.fetch(req)),
    close: () => keyLimiter.close(),
  }
}

type Limiters = { keys: Limiter; sessions: Limiter }

function _allow(methods: readonly Method[]): string {
  return methods.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])).join(', ')
}

/**
 * The answer to a HEAD: GET's status and headers, with the Content-Length its body would have
 * had (a streamed body has none, as GET's is chunked), and no body. A stream is cancelled.
 */
function _bodiless(status: number, headers: Record<string, string>, body: Executed['body']): Response {
  if (typeof body === 'string') headers['content-length'] = String(Buffer.byteLength(body))
  else if (Buffer.isBuffer(body)) headers['content-length'] = String(body.length)
  else void body.cancel().catch(() => undefined)
  return new FastResponse(null, { status, headers })
}

/** The caller of a request: its API key, or else (dashboard on) its dashboard session's cookie. */
function _caller(deps: AppDeps, event: H3Event): Promise<Caller> {
  const headers = event.req.headers
  const authorization = headers.get('authorization')
  if (authorization === null && deps.config.dashboard) {
    const token = cookieValue(headers.get('cookie'), SESSION_COOKIE)
    if (token !== undefined) return authenticateSession(deps, headers, token)
  }
  return authenticate(deps, authorization)
}

async function _guard(event: H3Event, state: RequestState, deps: AppDeps, limiter: Limiters): Promise<Out> {
  const meta = event.context.matchedRoute?.meta as { route?: RouteDef; allow?: string } | undefined
  const route = meta?.route
  try {
    decodeURIComponent(event.url.pathname)
  } catch {
    throw badRequest('Malformed percent-encoding in the request path')
  }
  if (!route) {
    if (event.url.pathname === '/') {
      if (event.req.method === 'GET' || event.req.method === 'HEAD') return { status: 200, body: rootIndex(deps) }
      throw new ApiError(405, 'method_not_allowed', `Method ${event.req.method} is not allowed on /`, undefined, { Allow: 'GET, HEAD' })
    }
    // Under /v1 a valid key is counted and answered with its tenant and rate-limit headers here
    // too (a 429 past its limit); without one, or with a bad one, this stays a plain 404/405.
    const caller = /^\/v1(\/|$)/.test(event.url.pathname) ? await _caller(deps, event).catch(() => undefined) : undefined
    if (caller) await _admit(caller, state, deps, limiter)
    if (meta?.allow) {
      throw new ApiError(405, 'method_not_allowed', `Method ${event.req.method} is not allowed on ${event.url.pathname}`, undefined, { Allow: meta.allow })
    }
    throw notFound(`No route for ${event.req.method} ${event.url.pathname}`)
  }
  let ctx: TenantContext
  if (route.scope === 'public') {
    // Replays are kept per API key: a request without one (signing in) has none to keep them under.
    if (route.method === 'POST' && event.req.headers.has('idempotency-key')) throw badRequest('Idempotency-Key is for API keys; this route keeps no replays')
    ctx = { ...deps, tenantId: '', keyId: '' }
  } else {
    const caller = await _caller(deps, event)
    const admitted = _admit(caller, state, deps, limiter)
    if (admitted) await admitted
    const need = route.scope
    if (!need || !allows(need, caller.scopes, caller.session?.role)) {
      throw forbidden(need === 'session' || need === 'operator'
        ? `This route is only for a signed-in ${describeScope(need)}`
        : `This API key lacks the scope '${need ? describeScope(need) : 'unknown'}'`)
    }
    if (caller.session) {
      if (tenantScoped(need) && caller.tenantId === '') throw badRequest('Choose a tenant: the operator\'s session names it with the X-Travelops-Tenant header')
      if (event.req.headers.has('idempotency-key')) throw badRequest('Idempotency-Key is for API keys; a dashboard session does not keep replays')
    }
    ctx = { ...deps, tenantId: caller.tenantId, keyId: caller.keyId, scopes: caller.scopes, session: caller.session, bounds: caller.bounds }
  }
  const out = await executeRoute(route, event, ctx, state.requestId)
  return out.replayed ? { status: out.status, body: out.body, headers: { 'idempotent-replayed': 'true' } } : out
}

/**
 * Records the caller and counts the request against its key's hourly limit; 429 past it.
 * Synchronous with the in-memory limiter (no promise turn on SQLite's hot path).
 */
function _admit(caller: Caller, state: RequestState, deps: AppDeps, limiters: Limiters): void | Promise<void> {
  state.caller = caller
  // A session opened from a key's link counts against that key (CONTRACT §16); the operator's on its own.
  const limiter = caller.session && !caller.bounds ? limiters.sessions : limiters.keys
  const decision = limiter.hit(caller.bounds?.id ?? caller.keyId, caller.rateLimit ?? deps.config.rateLimit, deps.clock.now().getTime(), caller.tenantId)
  if (decision instanceof Promise) return decision.then((d) => _apply(d, state))
  _apply(decision, state)
}

function _apply(decision: RateDecision, state: RequestState): void {
  state.rate = decision
  if (!state.rate.allowed) {
    throw new ApiError(429, 'rate_limited', `Rate limit of ${state.rate.limit} requests per hour exceeded; retry after ${state.rate.retryAfter} s`,
      undefined, { 'Retry-After': String(state.rate.retryAfter) })
  }
}

function _errorOut(err: unknown, state: RequestState, deps: AppDeps, event: H3Event): Out {
  let apiError: ApiError
  const expected = asApiError(err)
  // Two writers raced past a check to the same unique key (a slug, a product code, an
  // idempotency key) or kept conflicting (several processes): the loser is told so.
  const conflict = expected ? undefined : deps.engine.conflictOf(err)
  if (expected) apiError = expected
  else if (_status(err) === 400) apiError = new ApiError(400, 'bad_request', 'Malformed request URL')
  else if (conflict === 'unique') apiError = new ApiError(409, 'conflict', 'A concurrent request changed this resource first; retry')
  else if (conflict === 'concurrent') apiError = new ApiError(409, 'conflict', 'Too many concurrent changes to this resource; retry')
  else {
    deps.logger.error('unhandled error', { request_id: state.requestId, method: event.req.method, path: event.url.pathname, error: String((err as Error)?.stack ?? err) })
    apiError = new ApiError(500, 'internal_error', 'Internal server error')
  }
  return { status: apiError.status, body: errorJson(apiError, state.requestId), headers: apiError.headers }
}

function _status(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : undefined
}

function _headers(out: Out, state: RequestState): Record<string, string> {
  const h: Record<string, string> = { 'content-type': JSON_TYPE, 'x-request-id': state.requestId, ...SECURITY_HEADERS }
  if (state.caller?.tenantId) h['x-tenant-id'] = state.caller.tenantId
  if (state.rate) {
    h['x-ratelimit-limit'] = String(state.rate.limit)
    h['x-ratelimit-remaining'] = String(state.rate.remaining)
    h['x-ratelimit-reset'] = String(state.rate.reset)
  }
  if (out.headers) for (const name in out.headers) h[name.toLowerCase()] = out.headers[name]!
  return h
}
