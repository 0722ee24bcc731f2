import type { TenantContext } from '../../context.ts'
import type { ApiKeyRow } from '../../db/schema.ts'
import { tenantTable } from '../../db/tenant-table.ts'
import { forbidden, notFound } from '../../http/errors.ts'
import { toPage, type Page } from '../../http/pagination.ts'
import { grants, RESOURCES, type Resource } from '../../http/scopes.ts'
import { KEY_LIFETIME, parseDuration } from '../../lib/duration.ts'
import { jsonString } from '../../lib/json.ts'
import type { ApiKey, CreatedApiKey, CreateKeyInput } from './schema.ts'
import { createKey, revokeKey } from './service.ts'

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

export async function listApiKeys(ctx: TenantContext, q: { limit: number; cursor?: string }): Promise<Page<ApiKey>> {
  return toPage(await keys.list(ctx.db, ctx.tenantId, { after: q.cursor, limit: q.limit }), q.limit, toApiKey, apiKeyJson)
}

export async function getApiKey(ctx: TenantContext, id: string): Promise<ApiKey> {
  const row = await keys.find(ctx.db, ctx.tenantId, id)
  if (!row) throw notFound(`No API key ${id}`)
  return toApiKey(row)
}

/**
 * A new key of the caller's tenant, shown once. It may hold only scopes the calling key holds:
 * `*` needs `*`; `<resource>:write` or `:*` needs write on that resource; `:read` needs read.
 */
export async function createApiKey(ctx: TenantContext, input: CreateKeyInput): Promise<CreatedApiKey> {
  const callerScopes = ctx.scopes ?? await _keyScopes(ctx)
  for (const scope of input.scopes) {
    if (!_holds(callerScopes, scope)) throw forbidden(`This API key cannot grant the scope '${scope}': a key may only create keys with scopes it holds itself`)
  }
  const now = ctx.clock.now()
  const ms = input.expires_in ? parseDuration(input.expires_in, KEY_LIFETIME)! : null
  const k = await createKey(ctx.db, {
    tenantId: ctx.tenantId, name: input.name ?? undefined, scopes: input.scopes, rateLimit: input.rate_limit ?? undefined,
    expiresAt: ms === null ? undefined : new Date(now.getTime() + ms),
  }, now)
  return { ...(await getApiKey(ctx, k.id)), key: k.key }
}

/** Revokes one of the tenant's keys (the calling key too); it stops working with the next request. */
export async function revokeApiKey(ctx: TenantContext, id: string): Promise<ApiKey> {
  if (!(await keys.find(ctx.db, ctx.tenantId, id))) throw notFound(`No API key ${id}`)
  await revokeKey(ctx.db, id, ctx.clock.now())
  return getApiKey(ctx, id)
}

async function _keyScopes(ctx: TenantContext): Promise<readonly string[]> {
  const caller = await keys.find(ctx.db, ctx.tenantId, ctx.keyId)
  return caller ? (JSON.parse(caller.scopes) as string[]) : []
}

function _holds(held: readonly string[], scope: string): boolean {
  if (scope === '*') return held.includes('*')
  const [resource, action] = scope.split(':') as [Resource, string]
  if (!(RESOURCES as readonly string[]).includes(resource)) return false
  return grants(held, { resource, action: action === 'read' ? 'read' : 'write' })
}
