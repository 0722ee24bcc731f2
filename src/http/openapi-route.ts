import { VERSION } from '../version.ts'
import { defineRoute, type RouteDef } from './define-route.ts'
import { buildOpenApi } from './openapi.ts'
import type { JsonObject } from './openapi-schema.ts'

/**
 * `routes` plus `GET /v1/openapi.json` (no auth), whose document covers the whole list,
 * itself included. It is built on the first request and then served from memory.
 */
export function withOpenApi(routes: readonly RouteDef[]): RouteDef[] {
  const all = [...routes]
  let doc: JsonObject | undefined
  all.push(defineRoute({
    method: 'GET', path: '/v1/openapi.json', scope: 'public', tag: 'System', summary: 'This OpenAPI 3.1 document', raw: true,
    handler: async () => (doc ??= buildOpenApi(all, VERSION)),
  }))
  return all
}
