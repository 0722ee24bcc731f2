import { hash, randomBytes } from 'node:crypto'
import { compiled } from '../../db/compiled.ts'
import type { Db } from '../../db/connect.ts'
import type { Engine } from '../../engine/port.ts'
import type { ApiKeyRow } from '../../db/schema.ts'
import { newId } from '../../lib/ids.ts'

const KEY_PREFIX = 'tok_'
/** 24 random bytes = 192 bits, base64url → 32 characters after the prefix. */
const KEY_PATTERN = /^tok_[A-Za-z0-9_-]{32}$/

/** One-shot `crypto.hash()`: no Hash object (a native handle per request) to create and collect. */
export const hashKey = (key: string) => hash('sha256', key, 'hex')
export const looksLikeKey = (key: string) => KEY_PATTERN.test(key)

export interface CreatedKey {
  id: string
  key: string
  tenant_id: string
  name: string | null
  scopes: string[]
  rate_limit: number | null
  created_at: string
  expires_at: string | null
}

export interface KeyView {
  id: string
  tenant_id: string
  name: string | null
  scopes: string[]
  prefix: string
  rate_limit: number | null
  created_at: string
  expires_at: string | null
  revoked_at: string | null
  last_used_at: string | null
}

/** The tenant's keys not revoked (expired ones count): CONTRACT §16 bounds them at 1,000. */
export async function countUnrevokedKeys(db: Db, tenantId: string): Promise<number> {
  const { n } = await db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('tenant_id', '=', tenantId).where('revoked_at', 'is', null).executeTakeFirstOrThrow()
  return Number(n)
}

/** A new key of the tenant, written through the engine's keysWrite() (every process's key cache hears of it); `db` may be a transaction. */
export async function createKey(
  engine: Engine,
  input: { tenantId: string; name?: string; scopes: string[]; rateLimit?: number; expiresAt?: Date },
  now: Date,
  db: Db = engine.db,
): Promise<CreatedKey> {
  const key = KEY_PREFIX + randomBytes(24).toString('base64url')
  const row = {
    id: newId('key'),
    tenant_id: input.tenantId,
    name: input.name ?? null,
    key_hash: hashKey(key),
    key_prefix: key.slice(0, 12),
    scopes: JSON.stringify(input.scopes),
    rate_limit: input.rateLimit ?? null,
    created_at: now.toISOString(),
    expires_at: input.expiresAt?.toISOString() ?? null,
  }
  await engine.keysWrite(db, (d) => d.insertInto('api_keys').values(row).execute())
  return {
    id: row.id, key, tenant_id: row.tenant_id, name: row.name, scopes: input.scopes,
    rate_limit: row.rate_limit, created_at: row.created_at, expires_at: row.expires_at,
  }
}

export function toKeyView(row: ApiKeyRow): KeyView {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    name: row.name,
    scopes: JSON.parse(row.scopes) as string[],
    prefix: row.key_prefix,
    rate_limit: row.rate_limit,
    created_at: row.created_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    last_used_at: row.last_used_at,
  }
}

export async function listKeys(db: Db, tenantId: string): Promise<KeyView[]> {
  const rows = await db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).orderBy('id', 'desc').execute()
  return rows.map(toKeyView)
}

/** One key by id (revoked or not), or undefined. */
export async function getKey(db: Db, id: string): Promise<KeyView | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
  return row && toKeyView(row)
}

/** Revokes a key; returns the key, or undefined when there is none with that id. Idempotent. */
export async function revokeKey(engine: Engine, id: string, now: Date): Promise<KeyView | undefined> {
  const db = engine.db
  await engine.keysWrite(db, (d) => d.updateTable('api_keys').set({ revoked_at: now.toISOString() }).where('id', '=', id).where('revoked_at', 'is', null).execute())
  const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
  return row && toKeyView(row)
}

const _byHash = compiled((db, hash: string) => db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash))

export async function findKeyByHash(db: Db, hash: string): Promise<ApiKeyRow | undefined> {
  return (await _byHash(db, hash))[0]
}

export async function touchKey(db: Db, id: string, now: Date): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: now.toISOString() }).where('id', '=', id).execute()
}

export { durationError, KEY_LIFETIME, parseDuration } from '../../lib/duration.ts'
