import type { AppDeps, KeyBounds } from './context.ts'
import type { Db } from './db/connect.ts'
import type { ApiKeyRow } from './db/schema.ts'
import { forbidden, notFound, unauthenticated } from './http/errors.ts'
import { isId } from './lib/ids.ts'
import { findSession, type Role } from './modules/dashboard/index.ts'
import { findKeyByHash, hashKey, looksLikeKey, touchKey } from './modules/keys/index.ts'
import { findTenant } from './modules/tenants/index.ts'

export interface Caller {
  keyId: string
  tenantId: string
  scopes: string[]
  /** null: follows the server's --rate-limit default. */
  rateLimit: number | null
  /** A signed-in dashboard browser (CONTRACT §14) rather than an API key; keyId is then the session's id. */
  session?: { role: Role }
  /** The key whose bounds apply (CONTRACT §16): this key, or the one whose link opened the session; none for the operator's sessions. */
  bounds?: KeyBounds
}

/** What one dashboard session may send per hour (counted per process): a browser page refreshes itself. */
export const SESSION_RATE_LIMIT = 10_000

/** The request header with which the dashboard's operator picks the tenant it works on. */
export const TENANT_HEADER = 'x-travelops-tenant'
/** The request header every dashboard request carries: another site cannot send it without a preflight, which is refused. */
export const DASHBOARD_HEADER = 'x-requested-with'
export const DASHBOARD_HEADER_VALUE = 'travelops-dashboard'

/** The value of cookie `name` in a Cookie header, or undefined. */
export function cookieValue(header: string | null, name: string): string | undefined {
  if (!header) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/**
 * Resolves a dashboard session's cookie. The session is only honoured for requests of the
 * dashboard's own page: same origin (Origin and Sec-Fetch-Site, when the browser sends them,
 * name this server) and carrying the dashboard's header. An operator session works on the
 * tenant named by X-Travelops-Tenant (tenantId '' when none is named).
 */
export async function authenticateSession(deps: AppDeps, headers: Headers, token: string): Promise<Caller> {
  const session = await findSession(deps.db, token, deps.clock.now())
  if (!session) throw unauthenticated('Your dashboard session has ended; sign in again with a new link')
  const site = headers.get('sec-fetch-site')
  const origin = headers.get('origin')
  let sameOrigin = site === null || site === 'same-origin'
  if (sameOrigin && origin !== null) {
    try {
      sameOrigin = new URL(origin).host === headers.get('host')
    } catch {
      sameOrigin = false
    }
  }
  if (!sameOrigin) throw forbidden('Cross-origin requests with a dashboard session are refused')
  if (headers.get(DASHBOARD_HEADER) !== DASHBOARD_HEADER_VALUE) {
    throw forbidden(`Requests with a dashboard session must carry "${DASHBOARD_HEADER}: ${DASHBOARD_HEADER_VALUE}"`)
  }
  let tenantId = session.tenant_id ?? ''
  const chosen = headers.get(TENANT_HEADER)
  if (session.role === 'operator' && chosen) {
    if (!isId('ten', chosen) || !(await findTenant(deps.db, chosen))) throw notFound(`No tenant ${chosen}`)
    tenantId = chosen
  }
  if (session.key_id === null) return { keyId: session.id, tenantId, scopes: ['*'], rateLimit: SESSION_RATE_LIMIT, session: { role: session.role } }
  // Opened from a key's link (CONTRACT §16): it lasts while that key does, and is that key.
  const key = await _findKey(deps, session.key_id, true)
  if (!key || key.revoked_at) throw unauthenticated('Your dashboard session has ended: the API key whose link opened it has been revoked')
  if (key.expires_at && key.expires_at <= deps.clock.now().toISOString()) throw unauthenticated('Your dashboard session has ended: the API key whose link opened it has expired')
  return { keyId: session.id, tenantId, scopes: key.scopeList, rateLimit: key.rate_limit, session: { role: session.role }, bounds: key }
}

const TOUCH_EVERY_MS = 60_000

/**
 * Resolves `Authorization: Bearer <key>` on every request. Key rows are cached only until keys
 * may have changed (see keysVersion: any commit by another process, a key write by this one), so a key
 * revoked by the CLI stops working at once for a running server. Only the key's hash is
 * looked up; the key itself is never logged or stored.
 */
export async function authenticate(deps: AppDeps, header: string | null): Promise<Caller> {
  if (!header) throw unauthenticated('Missing Authorization header; send "Authorization: Bearer <api key>"')
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (!m) throw unauthenticated('Malformed Authorization header; expected "Bearer <api key>"')
  const key = m[1]!
  if (!looksLikeKey(key)) throw unauthenticated('Invalid API key')
  const row = await _findKey(deps, hashKey(key))
  if (!row) throw unauthenticated('Invalid API key')
  const now = deps.clock.now()
  if (row.revoked_at) throw unauthenticated('This API key has been revoked')
  if (row.expires_at && row.expires_at <= now.toISOString()) throw unauthenticated('This API key has expired')
  if (!row.last_used_at || now.getTime() - Date.parse(row.last_used_at) > TOUCH_EVERY_MS) {
    row.last_used_at = now.toISOString() // the cached row: requests until the write lands do not write again
    touchKey(deps.db, row.id, now).catch((err: unknown) => deps.logger.warn('could not record key use', { key_id: row.id, error: String(err) }))
  }
  return { keyId: row.id, tenantId: row.tenant_id, scopes: row.scopeList, rateLimit: row.rate_limit, bounds: row }
}

type KeyRow = ApiKeyRow & { scopeList: string[] }

interface KeyCache {
  version: string
  rows: Map<string, KeyRow | null>
}

const _CACHE_MAX = 10_000
const _caches = new WeakMap<Db, KeyCache>()

/** The key row by hash (or by id: the cache's keys never collide), null: none; from the cache while keys are unchanged. */
async function _findKey(deps: AppDeps, hash: string, byId = false): Promise<KeyRow | null> {
  const db = deps.db
  const version = deps.engine.keysVersion()
  if (version === null) return _load(db, hash, byId)
  let cache = _caches.get(db)
  if (!cache || cache.version !== version) _caches.set(db, (cache = { version, rows: new Map() }))
  const hit = cache.rows.get(hash)
  if (hit !== undefined) return hit
  const row = await _load(db, hash, byId)
  // Only if nothing changed while loading; the next request loads again otherwise.
  if (deps.engine.keysVersion() === version) {
    if (cache.rows.size >= _CACHE_MAX) cache.rows.clear()
    cache.rows.set(hash, row)
  }
  return row
}

async function _load(db: Db, hash: string, byId: boolean): Promise<KeyRow | null> {
  const row = byId ? await db.selectFrom('api_keys').selectAll().where('id', '=', hash).executeTakeFirst() : await findKeyByHash(db, hash)
  return row ? { ...row, scopeList: JSON.parse(row.scopes) as string[] } : null
}
