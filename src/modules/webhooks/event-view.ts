import * as v from 'valibot'
import { EVENT_NAMES, type EventName } from '../../events/catalog.ts'
import { CustomerView } from '../customers/index.ts'
import { InquiryView } from '../inquiries/index.ts'
import { InvoiceView } from '../invoices/index.ts'
import { ItineraryView } from '../itineraries/index.ts'
import { OrderView } from '../orders/index.ts'
import { PaymentView } from '../payments/index.ts'
import { ProductView } from '../products/index.ts'
import * as out from '../view-fields.ts'
import { WebhookView } from './webhook-view.ts'

/** `order` of `order.created`: the resource an event is about. */
type EventResource = EventName extends `${infer R}.${string}` ? R : never

/** One branch per resource; a new event family fails to type-check until it has its view here. */
const BRANCHES = {
  order: _event('order', OrderView),
  customer: _event('customer', CustomerView),
  product: _event('product', ProductView),
  itinerary: _event('itinerary', ItineraryView),
  invoice: _event('invoice', InvoiceView),
  payment: _event('payment', PaymentView),
  inquiry: _event('inquiry', InquiryView),
  // webhook.disabled (CONTRACT §15): the subscription endpoint health disabled, as GET /v1/webhooks/:id shows it.
  webhook: _event('webhook', WebhookView),
} satisfies Record<EventResource, v.GenericSchema>

/**
 * The body every receiver gets, and a delivery's `payload`: the events of each resource carry
 * that resource's view as `data`.
 */
export const EventView = v.pipe(
  v.variant('event', Object.values(BRANCHES)),
  v.title('Event'),
  v.description('An event as sent to webhook receivers: `data` is the record exactly as GET returned it after the change'),
)

export type EventBody = v.InferOutput<typeof EventView>

function _event<R extends EventResource, D extends v.GenericSchema>(resource: R, data: D) {
  const names = EVENT_NAMES.filter((n): n is Extract<EventName, `${R}.${string}`> => n.startsWith(`${resource}.`))
  return v.strictObject({
    id: v.pipe(out.id('evt'), v.description('The event id, also sent as `X-Webhook-ID`: the same on every attempt')),
    event: v.picklist(names),
    timestamp: v.pipe(out.Timestamp, v.description('When the change happened (UTC, ISO 8601 with milliseconds)')),
    tenant_id: out.id('ten'),
    data, // the resource's view itself, so the document refers to its component
    test: v.pipe(v.optional(v.literal(true)), v.description('Present (`true`) only on a test event sent with POST /v1/webhooks/{id}/test: `data` is an example record')),
  })
}
