import { defineRoute, type RouteDef } from '../../http/define-route.ts'
import { toPage } from '../../http/pagination.ts'
import { EventView } from '../webhooks/index.ts'
import { ListEventsQuery } from './schema.ts'
import { eventJson, getEvent, listEvents, toEvent } from './service.ts'

const read = { resource: 'events', action: 'read' } as const
const tag = 'Events'

/**
 * CONTRACT §15's events API. `/v1/events/:id` takes only `evt_` ids, and h3 (rou3) matches a
 * static segment before a parameter whatever the order of definition, so `/v1/events/stream`
 * can join later without `:id` taking it (test/unit/route-precedence.test.ts).
 */
export const eventRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET', path: '/v1/events', scope: read, tag, summary: 'List the tenant\'s events, newest first (`order=asc`: oldest first)', list: true,
    description: 'Every event of the tenant, whether or not a subscription received it, as long as retention keeps it (`--retention` after its last delivery finished, '
      + 'or after it was created when it had none). Each item is the envelope exactly as a delivery\'s body carries it, byte for byte '
      + '(`test: true` on a test event). `type` takes names and families (`order.*`); an unknown one is a 400 naming it. '
      + '`created_after` and `created_before` are exclusive. Give the same `order` and filters with each `cursor`.',
    query: ListEventsQuery,
    response: EventView,
    handler: async ({ ctx, query }) => toPage(await listEvents(ctx, query), query.limit, toEvent, eventJson),
  }),
  defineRoute({
    method: 'GET', path: '/v1/events/:id', scope: read, tag, summary: 'Read one event: the envelope exactly as a delivery\'s body carries it',
    params: { id: 'evt' },
    response: EventView,
    handler: ({ ctx, params }) => getEvent(ctx, params.id!),
  }),
]
