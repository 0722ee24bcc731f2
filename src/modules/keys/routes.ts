import { defineRoute, type RouteDef } from '../../http/define-route.ts'
import { toPage } from '../../http/pagination.ts'
import { apiKeyJson, createApiKey, getApiKey, listApiKeys, revokeApiKey, toApiKey } from './api.ts'
import { ApiKeyView, CreatedApiKeyView, CreateKeyBody } from './schema.ts'

const read = { resource: 'keys', action: 'read' } as const
const write = { resource: 'keys', action: 'write' } as const
const tag = 'API keys'
const READ_ONLY = ['id', 'prefix', 'key', 'created_at', 'expires_at', 'revoked_at', 'last_used_at']

export const keyRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET', path: '/v1/keys', scope: read, tag, summary: 'List the tenant\'s API keys (never their secrets)', list: true,
    response: ApiKeyView,
    handler: async ({ ctx, query }) => toPage(await listApiKeys(ctx, query), query.limit, toApiKey, apiKeyJson),
  }),
  defineRoute({
    method: 'POST', path: '/v1/keys', scope: write, tag, summary: 'Create an API key (its secret is in this answer only)', status: 201,
    description: 'Creates a key of this tenant: `scopes` default `["*"]`, `rate_limit` requests per hour (`null`: the serve\'s `--rate-limit`), `expires_in` a duration from `1s` to `3650d` (`90d`, `12h`; `null`: never). '
      + 'Only this answer carries `key`, the full secret. A key may only create keys whose scopes it holds itself '
      + '(`orders:read` cannot create `orders:write` or `*`; `orders:*` can create `orders:read`), with a `rate_limit` no higher and an expiry no later than its own '
      + '(left out, both are the calling key\'s own): anything more is 403 `forbidden` naming the bound. At most 1,000 unrevoked keys per tenant (422 beyond).',
    body: CreateKeyBody, readOnly: READ_ONLY,
    response: CreatedApiKeyView, secretFields: ['key'],
    handler: ({ ctx, body }) => createApiKey(ctx, body),
  }),
  defineRoute({
    method: 'GET', path: '/v1/keys/:id', scope: read, tag, summary: 'Read an API key', params: { id: 'key' },
    response: ApiKeyView,
    handler: ({ ctx, params }) => getApiKey(ctx, params.id!),
  }),
  defineRoute({
    method: 'DELETE', path: '/v1/keys/:id', scope: write, tag, summary: 'Revoke an API key (it stops working at once)', params: { id: 'key' },
    description: 'Revokes the key and answers 200 with the key record, `revoked_at` set (unlike other DELETEs, which answer `{ id, deleted }`). '
      + 'The next request with that key, including the one revoking itself, gets 401. Revoking a revoked key keeps its first `revoked_at`. '
      + 'A key may revoke only keys whose every scope it holds itself (403 otherwise).',
    response: ApiKeyView,
    handler: ({ ctx, params }) => revokeApiKey(ctx, params.id!),
  }),
]
