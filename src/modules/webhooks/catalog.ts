import * as v from 'valibot'
import type { TenantContext } from '../../context.ts'
import { EVENT_NAMES, type EventName } from '../../events/catalog.ts'
import { exampleData } from './event-examples.ts'
import { countReplayable, replayDeliveries as replay } from '../../delivery/requeue.ts'
import { InvalidError } from '../../lib/errors.ts'
import { IdRef, TimestampQuery } from '../fields.ts'
import * as repo from './repo.ts'

/** What emits each event, in words; the routes that do are listed from their definitions. */
const WHAT: Record<EventName, string> = {
  'order.created': 'An order is created.',
  'order.updated': 'An order changes in any way: a PATCH that changes a field or its status, and every confirm or cancel (sent alongside order.confirmed or order.cancelled).',
  'order.confirmed': 'A pending order is confirmed, by confirm or by a PATCH of its status (order.updated is sent too).',
  'order.cancelled': 'A pending or confirmed order is cancelled, by cancel or by a PATCH of its status (order.updated is sent too).',
  'payment.received': 'A payment is recorded.',
  'payment.refunded': 'A payment is refunded, in part or in full.',
  'invoice.created': 'An invoice is created.',
  'invoice.paid': 'An open invoice becomes paid: by pay, by payments reaching its total, or by a PATCH of its lines that brings the total down to what was paid.',
  'customer.created': 'A customer is created.',
  'customer.updated': 'A customer\'s fields change.',
  'inquiry.created': 'An inquiry arrives.',
  'product.created': 'A product is created.',
  'product.updated': 'A product\'s fields change.',
  'itinerary.created': 'An itinerary is created.',
  'webhook.disabled': 'Endpoint health disables one of the tenant\'s other subscriptions: its receiver answered 410 Gone, or every attempt failed for --disable-after. '
    + '`data` is that subscription as GET /v1/webhooks/{id} then shows it (`active: false`, `disabled_at`, `disabled_reason`). Sent by the delivery engine, not after a request; '
    + 'never for a PATCH that sets `active: false`, and never to the subscription disabled.',
}

export const EventTypeView = v.pipe(
  v.strictObject({
    name: v.picklist(EVENT_NAMES),
    description: v.string(),
    emitted_by: v.pipe(v.array(v.string()), v.description('The API routes that may emit it, as `METHOD /path`; none for `webhook.disabled`, which the delivery engine emits')),
    example: v.pipe(v.unknown(), v.description('An example event body, exactly as a receiver gets it (the `data` is an example record)')),
  }),
  v.title('EventType'),
  v.description(`One of the ${EVENT_NAMES.length} events a subscription can receive`),
)
export type EventType = v.InferOutput<typeof EventTypeView>

/** What the catalog reads of a route: its method and path, and the events it may emit. */
export interface EmittingRoute {
  method: string
  path: string
  events?: readonly EventName[]
}

let _emitters: Map<string, string[]> | undefined

/**
 * GET /v1/webhooks/event-types: the catalog with an example body per event, addressed to the
 * caller's tenant. `routes`: every route of the API (src/routes.ts gives them), whose `events` say what emits each.
 */
export async function listEventTypes(ctx: TenantContext, routes: readonly EmittingRoute[]): Promise<EventType[]> {
  if (!_emitters) {
    _emitters = new Map()
    for (const r of routes) for (const e of r.events ?? []) _emitters.set(e, [...(_emitters.get(e) ?? []), `${r.method} ${r.path}`])
  }
  const at = ctx.clock.now().toISOString()
  return EVENT_NAMES.map((name) => ({
    name, description: WHAT[name], emitted_by: _emitters!.get(name) ?? [],
    example: { id: 'evt_00000000-0000-7000-8000-000000000000', event: name, timestamp: at, tenant_id: ctx.tenantId, data: exampleData(name, ctx.tenantId, at) },
  }))
}

export const ReplayBody = v.strictObject({
  webhook_id: v.pipe(IdRef('wh'), v.description('The subscription whose deliveries to replay')),
  status: v.optional(v.pipe(v.picklist(['failed', 'delivered'], 'must be failed or delivered'), v.description('Only deliveries in this status (default: both)'))),
  since: v.optional(v.pipe(TimestampQuery, v.description('Only deliveries created at or after this time'))),
  dry_run: v.optional(v.pipe(v.boolean(), v.description('Count only; queue nothing'))),
})

export const ReplayView = v.pipe(
  v.strictObject({
    queued: v.pipe(v.number(), v.integer(), v.description('How many deliveries were queued (or would be, with `dry_run`)')),
    dry_run: v.boolean(),
  }),
  v.title('ReplayResult'),
)

/** POST /v1/webhooks/deliveries/replay: queues a new attempt of a subscription's finished deliveries, as `travelops deliveries replay`. */
export async function replayDeliveries(ctx: TenantContext, body: v.InferOutput<typeof ReplayBody>) {
  const webhookId = body.webhook_id
  if (!(await repo.findWebhook(ctx.db, ctx.tenantId, webhookId))) throw new InvalidError([{ path: 'webhook_id', message: `no webhook ${webhookId}` }])
  const filter = { tenantId: ctx.tenantId, webhookId, status: body.status, since: body.since }
  if (body.dry_run) return { queued: await countReplayable(ctx.db, filter), dry_run: true }
  const queued = await replay(ctx, filter, ctx.clock.now())
  if (queued) ctx.notify()
  return { queued, dry_run: false }
}
