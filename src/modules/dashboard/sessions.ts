import { hash as digest, randomBytes } from 'node:crypto'
import type { Db } from '../../db/connect.ts'
import type { DashboardSessionRow } from '../../db/schema.ts'
import { withTx } from '../../engine/tx.ts'
import type { Engine } from '../../engine/port.ts'
import { newId } from '../../lib/ids.ts'

// Signing in to the dashboard (CONTRACT §14): a one-time link opens a session of 12 h, kept in
// an HttpOnly cookie. Only hashes of both tokens are stored, so neither a database copy nor a
// backup can be used to sign in.

export type Role = 'operator' | 'tenant'

export const LINK_TTL_MS = 15 * 60_000
export const SESSION_TTL_MS = 12 * 3600_000
export const SESSION_COOKIE = 'travelops_session'

const LINK_PATTERN = /^dl_[A-Za-z0-9_-]{43}$/
const SESSION_PATTERN = /^[A-Za-z0-9_-]{43}$/

const _hash = (token: string) => digest('sha256', token, 'hex')
/** 32 random bytes (256 bits), base64url: 43 characters. */
const _token = () => randomBytes(32).toString('base64url')

export interface IssuedLink {
  token: string
  role: Role
  tenant_id: string | null
  expires_at: string
}

/**
 * A sign-in link's token for the operator (tenantId null) or one tenant; with `keyId` (a key's
 * POST /v1/dashboard/links) the session it opens is that key's (CONTRACT §16).
 */
export async function issueLink(db: Db, tenantId: string | null, ttlMs: number, now: Date, keyId: string | null = null): Promise<IssuedLink> {
  const token = `dl_${_token()}`
  const row = {
    token_hash: _hash(token), role: (tenantId ? 'tenant' : 'operator') as Role, tenant_id: tenantId,
    created_at: now.toISOString(), expires_at: new Date(now.getTime() + ttlMs).toISOString(), used_at: null, key_id: keyId,
  }
  await db.insertInto('dashboard_links').values(row).execute()
  return { token, role: row.role, tenant_id: tenantId, expires_at: row.expires_at }
}

/** `<base>/dashboard/signin#<token>`: the token travels in the fragment, which browsers never send to a server or put in a Referer. */
export function linkUrl(base: string, token: string): string {
  return `${base.replace(/\/+$/, '')}/dashboard/signin#${token}`
}

export type Redeemed =
  | { ok: true; token: string; session: DashboardSessionRow }
  | { ok: false; reason: 'unknown' | 'used' | 'expired' | 'key' }

/** Uses a link (once: the update is the check) and opens its session; not when the key that made it has been revoked or has expired. */
export async function redeemLink(engine: Engine, token: string, now: Date): Promise<Redeemed> {
  if (!LINK_PATTERN.test(token)) return { ok: false, reason: 'unknown' }
  const hash = _hash(token)
  const at = now.toISOString()
  return withTx(engine, async ({ tx }) => {
    const link = await tx.updateTable('dashboard_links').set({ used_at: at })
      .where('token_hash', '=', hash).where('used_at', 'is', null).where('expires_at', '>', at)
      .returning(['role', 'tenant_id', 'key_id']).executeTakeFirst()
    if (!link) {
      const seen = await tx.selectFrom('dashboard_links').select(['used_at']).where('token_hash', '=', hash).executeTakeFirst()
      return { ok: false as const, reason: !seen ? 'unknown' as const : seen.used_at ? 'used' as const : 'expired' as const }
    }
    if (link.key_id !== null) {
      const key = await tx.selectFrom('api_keys').select(['revoked_at', 'expires_at']).where('id', '=', link.key_id).executeTakeFirst()
      if (!key || key.revoked_at !== null || (key.expires_at !== null && key.expires_at <= at)) return { ok: false as const, reason: 'key' as const }
    }
    const sessionToken = _token()
    const session: DashboardSessionRow = {
      id: newId('ses'), token_hash: _hash(sessionToken), role: link.role, tenant_id: link.tenant_id,
      created_at: at, expires_at: new Date(now.getTime() + SESSION_TTL_MS).toISOString(), ended_at: null, key_id: link.key_id,
    }
    await tx.insertInto('dashboard_sessions').values(session).execute()
    return { ok: true as const, token: sessionToken, session }
  })
}

/** The live session of a cookie's value, or null (unknown, ended, expired). */
export async function findSession(db: Db, token: string, now: Date): Promise<DashboardSessionRow | null> {
  if (!SESSION_PATTERN.test(token)) return null
  const row = await db.selectFrom('dashboard_sessions').selectAll()
    .where('token_hash', '=', _hash(token)).where('ended_at', 'is', null).where('expires_at', '>', now.toISOString())
    .executeTakeFirst()
  return row ?? null
}

/** Signs one session out. */
export async function endSession(db: Db, id: string, now: Date): Promise<void> {
  await db.updateTable('dashboard_sessions').set({ ended_at: now.toISOString() }).where('id', '=', id).where('ended_at', 'is', null).execute()
}

/**
 * Ends the live sessions of one tenant (or every session, the operator's too) and voids their
 * unused links. Returns how many sessions it ended.
 */
export async function revokeSessions(engine: Engine, which: { tenantId: string } | { all: true }, now: Date): Promise<number> {
  const at = now.toISOString()
  return withTx(engine, async ({ tx }) => {
    let links = tx.updateTable('dashboard_links').set({ used_at: at }).where('used_at', 'is', null)
    let sessions = tx.updateTable('dashboard_sessions').set({ ended_at: at }).where('ended_at', 'is', null).where('expires_at', '>', at)
    if ('tenantId' in which) {
      links = links.where('tenant_id', '=', which.tenantId)
      sessions = sessions.where('tenant_id', '=', which.tenantId)
    }
    await links.execute()
    return Number((await sessions.executeTakeFirst()).numUpdatedRows)
  })
}

/** Deletes links and sessions that can no longer be used (expired a day ago or more). */
export async function pruneSignIns(db: Db, now: Date): Promise<void> {
  const cutoff = new Date(now.getTime() - 86_400_000).toISOString()
  await db.deleteFrom('dashboard_links').where('expires_at', '<', cutoff).execute()
  await db.deleteFrom('dashboard_sessions').where('expires_at', '<', cutoff).execute()
}
