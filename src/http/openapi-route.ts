import * as v from 'valibot'
import { VERSION } from '../version.ts'
import { defineRoute, type RouteDef } from './define-route.ts'
import { buildOpenApi, type OpenApiDocument, type OpenApiEvents } from './openapi.ts'

/**
 * `routes` plus `GET /v1/openapi.json` (no auth), whose document covers the whole list,
 * itself included, and the events sent to receivers (`webhooks`, from `events`). It is built on the first request and then served from memory.
 */
export function withOpenApi(routes: readonly RouteDef[], events: OpenApiEvents): RouteDef[] {
  const all = [...routes]
  let doc: OpenApiDocument | undefined
  all.push(defineRoute({
    method: 'GET', path: '/v1/openapi.json', scope: 'public', tag: 'System', summary: 'This OpenAPI 3.1 document', raw: true,
    response: OpenApiOutline,
    handler: async () => (doc ??= servedDocument(all, events)),
  }))
  return all
}

/** The document GET /v1/openapi.json serves for `routes` (the list `withOpenApi` returned); `npm run openapi` writes it to a file. */
export const servedDocument = (routes: readonly RouteDef[], events: OpenApiEvents): OpenApiDocument => buildOpenApi(routes, VERSION, events)

/** The outline of an OpenAPI 3.1 document (its full schema is the OpenAPI specification's). */
const OpenApiOutline = v.pipe(
  v.looseObject({
    openapi: v.pipe(v.string(), v.regex(/^3\.1\.\d+$/)),
    info: v.looseObject({ title: v.string(), version: v.string() }),
    paths: v.record(v.string(), v.looseObject({})),
    components: v.looseObject({}),
  }),
  v.description('An OpenAPI 3.1 document: https://spec.openapis.org/oas/v3.1.1'),
)
