import type { AppDeps } from '../context.ts'
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
 * Resolves `Authorization: Bearer <key>` on every request, straight from the database, so a
 * key revoked by the CLI stops working at once for a running server. Only the key's hash is
 * looked up; the key itself is never logged or stored.
 */
export async function authenticate(deps: AppDeps, header: string | null): Promise<Caller> {
  if (!header) throw unauthenticated('Missing Authorization header; send "Authorization: Bearer <api key>"')
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (!m) throw unauthenticated('Malformed Authorization header; expected "Bearer <api key>"')
  const key = m[1]!
  if (!looksLikeKey(key)) throw unauthenticated('Invalid API key')
  const row = await findKeyByHash(deps.db, hashKey(key))
  if (!row) throw unauthenticated('Invalid API key')
  const now = deps.clock.now()
  if (row.revoked_at) throw unauthenticated('This API key has been revoked')
  if (row.expires_at && row.expires_at <= now.toISOString()) throw unauthenticated('This API key has expired')
  if (!row.last_used_at || now.getTime() - Date.parse(row.last_used_at) > TOUCH_EVERY_MS) {
    touchKey(deps.db, row.id, now).catch((err: unknown) => deps.logger.warn('could not record key use', { key_id: row.id, error: String(err) }))
  }
  return { keyId: row.id, tenantId: row.tenant_id, scopes: JSON.parse(row.scopes) as string[], rateLimit: row.rate_limit }
}
