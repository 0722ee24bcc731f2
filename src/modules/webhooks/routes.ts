import { defineRoute, EmptyBody, type RouteDef } from '../../http/define-route.ts'
import { toPage } from '../../http/pagination.ts'
import * as deliveries from './deliveries.ts'
import { CreatedWebhookView, CreateWebhookBody, DeliveryDetailView, TestEventBody, DeliveryView, ListDeliveriesQuery, UpdateWebhookBody, WEBHOOK_READ_ONLY, WebhookView } from './schema.ts'
import * as webhooks from './service.ts'
import { MAX_STATS_BUCKETS, StatsQuery, StatsRowView, webhookStats } from './stats.ts'
import * as v from 'valibot'
import { EventTypeView, listEventTypes, replayDeliveries, ReplayBody, ReplayView } from './catalog.ts'

const read = { resource: 'webhooks', action: 'read' } as const
const write = { resource: 'webhooks', action: 'write' } as const
const tag = 'Webhooks'

/** The module's routes; `all` gives every route of the API, which the event catalog lists as what emits each event. */
export const webhookRoutes = (all: () => readonly RouteDef[]): RouteDef[] => [
  defineRoute({
    method: 'GET', path: '/v1/webhooks', scope: read, tag, summary: 'List webhook subscriptions', list: true,
    response: WebhookView,
    handler: async ({ ctx, query }) => toPage(await webhooks.listWebhooks(ctx, query), query.limit, webhooks.toWebhook, webhooks.webhookJson),
  }),
  defineRoute({
    method: 'POST', path: '/v1/webhooks', scope: write, tag, summary: 'Create a webhook subscription', status: 201,
    body: CreateWebhookBody, readOnly: [...WEBHOOK_READ_ONLY, 'active'],
    response: CreatedWebhookView, secretFields: ['secret'],
    handler: ({ ctx, body }) => webhooks.createWebhook(ctx, body),
  }),
  defineRoute({
    method: 'GET', path: '/v1/webhooks/stats', scope: read, tag, summary: 'Delivery attempts per hour or day: counts and duration percentiles',
    rules: ['`until` (default: now) not after `since` (default: 24 hours before `until`) (400)', 'a range of more than 1000 buckets (400)'],
    description: 'One row per `bucket` (`hour` or `day`, UTC) from `since` to `until` (default: the last 24 hours), empty buckets included. '
      + 'Attempts are counted by the time they were made; `p50_ms` and `p95_ms` are exact percentiles of their durations, `null` for an empty bucket. '
      + `At most ${MAX_STATS_BUCKETS} buckets: a longer range answers 400. \`webhook_id\` restricts it to one subscription.`,
    query: StatsQuery,
    response: v.array(StatsRowView),
    handler: ({ ctx, query }) => webhookStats(ctx, query),
  }),
  defineRoute({
    method: 'GET', path: '/v1/webhooks/event-types', scope: read, tag, summary: 'The event catalog: every event, what emits each, an example body',
    description: 'Every event a subscription can ask for, with what emits it (in words and as the API routes that may) and an example body exactly as a receiver gets it.',
    response: v.array(EventTypeView),
    handler: ({ ctx }) => listEventTypes(ctx, all()),
  }),
  defineRoute({
    method: 'POST', path: '/v1/webhooks/deliveries/replay', scope: write, tag, summary: 'Queue a new attempt of a subscription\'s finished deliveries',
    description: 'Queues an immediate new attempt of every delivered or failed delivery of the subscription `webhook_id` (`status` narrows it; `since`: created at or after), '
      + 'as `travelops deliveries replay` does. `dry_run: true` only counts. An inactive subscription queues nothing; an unknown one is a 422.',
    body: ReplayBody,
    response: ReplayView,
    handler: ({ ctx, body }) => replayDeliveries(ctx, body),
  }),
  defineRoute({
    method: 'GET', path: '/v1/webhooks/deliveries', scope: read, tag, summary: 'List delivery records, newest first', list: true,
    query: ListDeliveriesQuery,
    response: DeliveryView,
    handler: async ({ ctx, query }) => toPage(await deliveries.listDeliveries(ctx, query), query.limit, deliveries.toDelivery, deliveries.deliveryJson),
  }),
  defineRoute({
    method: 'GET', path: '/v1/webhooks/deliveries/:id', scope: read, tag, summary: 'Read a delivery with its payload and every attempt',
    description: `Every attempt, oldest first. A record with more than ${deliveries.ATTEMPT_WINDOW} attempts (manual retries have no cap) is sent `
      + `with chunked transfer encoding, ${deliveries.ATTEMPT_WINDOW} attempts at a time as the client reads: the same JSON, without a Content-Length.`,
    params: { id: 'del' },
    response: DeliveryDetailView,
    handler: ({ ctx, params }) => deliveries.getDelivery(ctx, params.id!),
  }),
  defineRoute({
    method: 'POST', path: '/v1/webhooks/deliveries/:id/retry', scope: write, tag, summary: 'Queue an immediate new attempt',
    description: 'Answers the record as GET does (a long attempt log streamed the same way, also under an `Idempotency-Key`: the answer is kept for its replay in parts, then sent as a replay is). '
      + 'A record still waiting for its first attempt is a 409, as is one whose subscription is inactive or deleted.',
    params: { id: 'del' }, body: EmptyBody,
    response: DeliveryDetailView,
    handler: ({ ctx, params }) => deliveries.retryDelivery(ctx, params.id!),
  }),
  defineRoute({
    method: 'POST', path: '/v1/webhooks/:id/test', scope: write, tag, summary: 'Send a test event (an example record, "test": true) to this subscription only',
    description: 'Sends `event` (default: the subscription\'s first event, `order.created` for `*`) with an example record as `data` and `"test": true` '
      + 'to this subscription only, as an ordinary delivery: recorded, signed and retried. 202 with the delivery record. '
      + 'An event the subscription does not receive answers 422; an inactive subscription 409.',
    params: { id: 'wh' }, body: TestEventBody, status: 202,
    response: DeliveryView,
    handler: ({ ctx, params, body }) => deliveries.sendTestEvent(ctx, params.id!, body),
  }),
  defineRoute({
    method: 'GET', path: '/v1/webhooks/:id', scope: read, tag, summary: 'Read a webhook subscription', params: { id: 'wh' },
    response: WebhookView,
    handler: ({ ctx, params }) => webhooks.getWebhook(ctx, params.id!),
  }),
  defineRoute({
    method: 'PATCH', path: '/v1/webhooks/:id', scope: write, tag, summary: 'Update a subscription (url, events, secret rotation, headers, active)',
    params: { id: 'wh' }, body: UpdateWebhookBody, readOnly: WEBHOOK_READ_ONLY,
    response: WebhookView,
    handler: ({ ctx, params, body }) => webhooks.updateWebhook(ctx, params.id!, body),
  }),
  defineRoute({
    method: 'DELETE', path: '/v1/webhooks/:id', scope: write, tag, summary: 'Delete a subscription (its delivery records stay)', params: { id: 'wh' },
    handler: ({ ctx, params }) => webhooks.deleteWebhook(ctx, params.id!),
  }),
]
