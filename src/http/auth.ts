import type { AppDeps } from '../context.ts'
import { dbVersion, type Db } from '../db/connect.ts'
import type { ApiKeyRow } from '../db/schema.ts'
import { findKeyByHash, hashKey, looksLikeKey, touchKey } from '../modules/keys/service.ts'
import { unauthenticated } from './errors.ts'

export interface Caller {
  keyId: string
  tenantId: string
  scopes: string[]
  /** null: follows the server's --rate-limit default. */
  rateLimit: number | null
}

const TOUCH_EVERY_MS = 60_000

/**
 * Resolves `Authorization: Bearer <key>` on every request. Key rows are cached only until the
 * database changes (see dbVersion: a write by any process, this one included), so a key
 * revoked by the CLI stops working at once for a running server. Only the key's hash is
 * looked up; the key itself is never logged or stored.
 */
export async function authenticate(deps: AppDeps, header: string | null): Promise<Caller> {
  if (!header) throw unauthenticated('Missing Authorization header; send "Authorization: Bearer <api key>"')
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (!m) throw unauthenticated('Malformed Authorization header; expected "Bearer <api key>"')
  const key = m[1]!
  if (!looksLikeKey(key)) throw unauthenticated('Invalid API key')
  const row = await _findKey(deps.db, hashKey(key))
  if (!row) throw unauthenticated('Invalid API key')
  const now = deps.clock.now()
  if (row.revoked_at) throw unauthenticated('This API key has been revoked')
  if (row.expires_at && row.expires_at <= now.toISOString()) throw unauthenticated('This API key has expired')
  if (!row.last_used_at || now.getTime() - Date.parse(row.last_used_at) > TOUCH_EVERY_MS) {
    row.last_used_at = now.toISOString() // the cached row: requests until the write lands do not write again
    touchKey(deps.db, row.id, now).catch((err: unknown) => deps.logger.warn('could not record key use', { key_id: row.id, error: String(err) }))
  }
  return { keyId: row.id, tenantId: row.tenant_id, scopes: row.scopeList, rateLimit: row.rate_limit }
}

type KeyRow = ApiKeyRow & { scopeList: string[] }

interface KeyCache {
  version: string
  rows: Map<string, KeyRow | null>
}

const _CACHE_MAX = 10_000
const _caches = new WeakMap<Db, KeyCache>()

/** The key row by hash (null: none), from the cache while the database is unchanged. */
async function _findKey(db: Db, hash: string): Promise<KeyRow | null> {
  const version = dbVersion(db)
  if (version === null) return _load(db, hash)
  let cache = _caches.get(db)
  if (!cache || cache.version !== version) _caches.set(db, (cache = { version, rows: new Map() }))
  const hit = cache.rows.get(hash)
  if (hit !== undefined) return hit
  const row = await _load(db, hash)
  // Only if nothing changed while loading; the next request loads again otherwise.
  if (dbVersion(db) === version) {
    if (cache.rows.size >= _CACHE_MAX) cache.rows.clear()
    cache.rows.set(hash, row)
  }
  return row
}

async function _load(db: Db, hash: string): Promise<KeyRow | null> {
  const row = await findKeyByHash(db, hash)
  return row ? { ...row, scopeList: JSON.parse(row.scopes) as string[] } : null
}
