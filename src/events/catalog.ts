import { WEBHOOK_DISABLED } from '../delivery/webhook-disabled.ts'

/**
 * The 15 event names of CONTRACT §8, the only names a subscription may ask for: the 14 the
 * routes emit, and `webhook.disabled` (§15), which the delivery stores emit when endpoint health
 * disables a subscription (delivery/webhook-disabled.ts).
 */
export const EVENT_NAMES = [
  'order.created',
  'order.updated',
  'order.confirmed',
  'order.cancelled',
  'payment.received',
  'payment.refunded',
  'invoice.created',
  'invoice.paid',
  'customer.created',
  'customer.updated',
  'inquiry.created',
  'product.created',
  'product.updated',
  'itinerary.created',
  WEBHOOK_DISABLED,
] as const

export type EventName = (typeof EVENT_NAMES)[number]

export function isEventName(name: string): name is EventName {
  return (EVENT_NAMES as readonly string[]).includes(name)
}

/** The JSON body every receiver gets. */
export interface EventEnvelope<T = unknown> {
  id: string
  event: EventName
  timestamp: string
  tenant_id: string
  data: T
}
