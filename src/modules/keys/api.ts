import type { KeyBounds, TenantContext } from '../../context.ts'
import { withTx } from '../../engine/tx.ts'
import type { ApiKeyRow } from '../../db/schema.ts'
import { tenantTable } from '../../db/tenant-table.ts'
import { ForbiddenError, InvalidError, NotFoundError } from '../../lib/errors.ts'
import { grants, RESOURCES, type Resource } from '../../lib/scopes.ts'
import { KEY_LIFETIME, parseDuration } from '../../lib/duration.ts'
import { jsonString } from '../../lib/json.ts'
import type { ApiKey, CreatedApiKey, CreateKeyInput } from './schema.ts'
import { countUnrevokedKeys, createKey, revokeKey } from './service.ts'

/** /v1/keys (CONTRACT §12): a tenant's keys over the API, with the same service as the CLI. */
const keys = tenantTable('api_keys')

export function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id, name: row.name, scopes: JSON.parse(row.scopes) as string[], prefix: row.key_prefix, rate_limit: row.rate_limit,
    created_at: row.created_at, expires_at: row.expires_at, revoked_at: row.revoked_at, last_used_at: row.last_used_at,
  }
}

/**
 * `JSON.stringify(toApiKey(row))` written straight from the row, the scopes as stored (JSON.stringify's
 * own output). Checked against toApiKey() on random rows (test/unit/record-json.test.ts).
 */
export function apiKeyJson(row: ApiKeyRow): string {
  return `{"id":${JSON.stringify(row.id)},"name":${jsonString(row.name)},"scopes":${row.scopes},"prefix":${JSON.stringify(row.key_prefix)},"rate_limit":${row.rate_limit},"created_at":${JSON.stringify(row.created_at)},"expires_at":${jsonString(row.expires_at)},"revoked_at":${jsonString(row.revoked_at)},"last_used_at":${jsonString(row.last_used_at)}}`
}

export function listApiKeys(ctx: TenantContext, q: { limit: number; cursor?: string }): ReturnType<typeof keys.list> {
  return keys.list(ctx.db, ctx.tenantId, { after: q.cursor, limit: q.limit })
}

export async function getApiKey(ctx: TenantContext, id: string): Promise<ApiKey> {
  const row = await keys.find(ctx.db, ctx.tenantId, id)
  if (!row) throw new NotFoundError(`No API key ${id}`)
  return toApiKey(row)
}

/** Unrevoked keys a tenant may hold when it mints one over the API (CONTRACT §16). */
export const MAX_KEYS_PER_TENANT = 1_000

/**
 * A new key of the caller's tenant, shown once, within the bounds of the minting key (CONTRACT
 * §12, §16; a dashboard session opened from a key's link has that key's): only scopes it holds
 * (`*` needs `*`; `<resource>:write` or `:*` needs write on that resource; `:read` needs read), a
 * rate limit no higher than its own and an expiry no later than its own, else 403. An absent
 * `rate_limit` or `expires_in` takes the minting key's own. The operator's sessions have no bounds.
 * Counted and inserted in one transaction: concurrent mints never pass MAX_KEYS_PER_TENANT.
 */
export async function createApiKey(ctx: TenantContext, input: CreateKeyInput): Promise<CreatedApiKey> {
  const bounds = ctx.bounds ?? (ctx.session ? undefined : await _keyBounds(ctx))
  const held = bounds?.scopeList ?? ctx.scopes ?? []
  for (const scope of input.scopes) {
    if (!_holds(held, scope)) throw new ForbiddenError(`This API key cannot grant the scope '${scope}': a key may only create keys with scopes it holds itself`)
  }
  const now = ctx.clock.now()
  const rateLimit = bounds ? _boundedRate(input.rate_limit, bounds, ctx.config.rateLimit) : input.rate_limit ?? null
  const expiresAt = _expiry(input.expires_in, bounds, now)
  const k = await withTx(ctx.engine, async ({ tx }) => {
    if (await countUnrevokedKeys(tx, ctx.tenantId) >= MAX_KEYS_PER_TENANT) {
      throw new InvalidError([{ path: '', message: `This tenant already has ${MAX_KEYS_PER_TENANT.toLocaleString('en')} unrevoked API keys, the most allowed; revoke one first` }])
    }
    return createKey(ctx.engine, {
      tenantId: ctx.tenantId, name: input.name ?? undefined, scopes: input.scopes, rateLimit: rateLimit ?? undefined,
      expiresAt: expiresAt === null ? undefined : new Date(expiresAt),
    }, now, tx)
  })
  return { ...(await getApiKey(ctx, k.id)), key: k.key }
}

/**
 * Revokes one of the tenant's keys (the calling key too); it stops working with the next request.
 * A bounded caller may revoke only keys whose every scope it holds itself (CONTRACT §16), else 403.
 */
export async function revokeApiKey(ctx: TenantContext, id: string): Promise<ApiKey> {
  const row = await keys.find(ctx.db, ctx.tenantId, id)
  if (!row) throw new NotFoundError(`No API key ${id}`)
  const bounds = ctx.bounds ?? (ctx.session ? undefined : await _keyBounds(ctx))
  const held = bounds?.scopeList ?? ctx.scopes ?? []
  for (const scope of JSON.parse(row.scopes) as string[]) {
    if (!_holds(held, scope)) throw new ForbiddenError(`This API key cannot revoke ${id}: it holds the scope '${scope}', which this key does not; a key may only revoke keys whose scopes it holds itself`)
  }
  await revokeKey(ctx.engine, id, ctx.clock.now())
  return getApiKey(ctx, id)
}

/** The rate limit of a key minted under `bounds`: absent → the bound's own; above it (null counts as --rate-limit) → 403. */
function _boundedRate(asked: number | null | undefined, bounds: KeyBounds, serverDefault: number): number | null {
  if (asked === undefined) return bounds.rate_limit
  const own = bounds.rate_limit ?? serverDefault
  if (asked === null ? bounds.rate_limit !== null : asked > own) {
    throw new ForbiddenError(`This API key cannot grant rate_limit ${asked === null ? 'null (the server\'s --rate-limit)' : asked}: a key may only create keys with a rate_limit of at most its own (${own})`)
  }
  return asked
}

/** The expiry (ms) of a minted key: absent → the bound's own; after it, or never while it expires → 403. */
function _expiry(asked: string | null | undefined, bounds: KeyBounds | undefined, now: Date): number | null {
  const own = bounds?.expires_at ? Date.parse(bounds.expires_at) : null
  if (asked === undefined) return own
  const at = asked === null ? null : now.getTime() + parseDuration(asked, KEY_LIFETIME)!
  if (own !== null && (at === null || at > own)) {
    throw new ForbiddenError(`This API key cannot grant expires_in ${asked === null ? 'null (never)' : asked}: it expires at ${bounds!.expires_at}, and a key may only create keys that expire no later than itself`)
  }
  return at
}

async function _keyBounds(ctx: TenantContext): Promise<KeyBounds | undefined> {
  const caller = await keys.find(ctx.db, ctx.tenantId, ctx.keyId)
  return caller ? { id: caller.id, scopeList: JSON.parse(caller.scopes) as string[], rate_limit: caller.rate_limit, expires_at: caller.expires_at } : undefined
}

function _holds(held: readonly string[], scope: string): boolean {
  if (scope === '*') return held.includes('*')
  const [resource, action] = scope.split(':') as [Resource, string]
  if (!(RESOURCES as readonly string[]).includes(resource)) return false
  return grants(held, { resource, action: action === 'read' ? 'read' : 'write' })
}
