import { defineRoute, type RouteDef } from '../../http/define-route.ts'
import { toPage } from '../../http/pagination.ts'
import { EventView } from '../webhooks/index.ts'
import * as v from 'valibot'
import { streamsOf } from '../../events/streams.ts'
import { BadInputError } from '../../lib/errors.ts'
import { EventStreamBody } from '../../lib/event-stream-body.ts'
import { EventIdInput, ListEventsQuery, StreamEventsQuery } from './schema.ts'
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
    method: 'GET', path: '/v1/events/stream', scope: read, tag, summary: 'Follow the tenant\'s events as they happen (Server-Sent Events)',
    description: 'Each new event of the tenant is one message: `id:` the event id, `event:` its name, `data:` the envelope exactly as a delivery\'s body carries it. '
      + 'Resume with the `Last-Event-ID` header (or `?after=`): the events after that one that are still kept come first, in order, then new ones; '
      + 'without either, only events made from now on. A new event reaches the stream within 1 s of the answer to the request that made it, on any '
      + '`serve` process of the database. A comment line every 15 s keeps proxies open. At most 5 streams per API key at once on a process '
      + '(429 beyond). A consumer that stops reading is disconnected once 1 MiB waits for it; it resumes with `Last-Event-ID` and loses nothing.',
    query: StreamEventsQuery,
    eventStream: 'Server-Sent Events: `id: <evt_…>`, `event: <name>`, `data: <the event envelope as JSON, on one line>`, then a blank line; comment lines (`: …`) keep the stream open',
    handler: async ({ ctx, query, headers }) => {
      const header = headers.get('last-event-id')
      let after = query.after ?? null
      if (header !== null && header !== '') {
        if (!v.is(EventIdInput, header)) throw new BadInputError('Last-Event-ID must be an event id (evt_…)')
        after = header
      }
      const names = query.type ? new Set<string>(query.type) : undefined
      const stream = await streamsOf(ctx.engine, ctx.logger).open({
        tenantId: ctx.tenantId, keyId: ctx.keyId, after, wants: names ? (name) => names.has(name) : () => true,
      })
      return new EventStreamBody(stream)
    },
  }),
  defineRoute({
    method: 'GET', path: '/v1/events/:id', scope: read, tag, summary: 'Read one event: the envelope exactly as a delivery\'s body carries it',
    params: { id: 'evt' },
    response: EventView,
    handler: ({ ctx, params }) => getEvent(ctx, params.id!),
  }),
]
