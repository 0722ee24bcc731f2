import { defineRoute, type RouteDef } from '../../http/define-route.ts'
import { toPage } from '../../http/pagination.ts'
import { CONTENT_READ_ONLY, ContentView, CreateContentBody, ENTITY_PATTERN, ListContentQuery, UpdateContentBody } from './schema.ts'
import * as content from './service.ts'

const read = { resource: 'content', action: 'read' } as const
const write = { resource: 'content', action: 'write' } as const
const tag = 'Content'
/** A malformed entity name answers 404, like a malformed id. */
const entity = { pattern: ENTITY_PATTERN, description: 'content type, e.g. destinations, pages, faqs: ^[a-z][a-z0-9_-]{0,49}$' }
const listParams = { entity }
const params = { entity, id: 'cnt' } as const

export const contentRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET', path: '/v1/content/:entity', scope: read, tag, summary: 'List records of a content type, newest first',
    params: listParams, list: true, query: ListContentQuery,
    response: ContentView,
    handler: async ({ ctx, params, query }) => toPage(await content.listContent(ctx, params.entity!, query), query.limit, content.toContent, content.contentJson),
  }),
  defineRoute({
    method: 'POST', path: '/v1/content/:entity', scope: write, tag, summary: 'Create a content record', status: 201,
    params: listParams, body: CreateContentBody, readOnly: CONTENT_READ_ONLY,
    response: ContentView,
    handler: ({ ctx, params, body }) => content.createContent(ctx, params.entity!, body),
  }),
  defineRoute({
    method: 'GET', path: '/v1/content/:entity/:id', scope: read, tag, summary: 'Read a content record', params,
    response: ContentView,
    handler: ({ ctx, params }) => content.getContent(ctx, params.entity!, params.id!),
  }),
  defineRoute({
    method: 'PATCH', path: '/v1/content/:entity/:id', scope: write, tag, summary: 'Update a content record', params,
    body: UpdateContentBody, readOnly: CONTENT_READ_ONLY,
    response: ContentView,
    handler: ({ ctx, params, body }) => content.updateContent(ctx, params.entity!, params.id!, body),
  }),
  defineRoute({
    method: 'DELETE', path: '/v1/content/:entity/:id', scope: write, tag, summary: 'Delete a content record', params,
    handler: ({ ctx, params }) => content.deleteContent(ctx, params.entity!, params.id!),
  }),
]
