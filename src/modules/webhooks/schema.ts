import * as v from 'valibot'
import { EVENT_NAMES, isEventName } from '../../events/catalog.ts'
import { anyCase, HEADER_PATTERNS, headerNameProblem, headerValueProblem } from '../../lib/http-headers.ts'
import { idPattern } from '../../lib/ids.ts'
import { documented } from '../../lib/schema-hints.ts'
import { TimestampQuery } from '../fields.ts'
import * as out from '../view-fields.ts'
import { EventView } from './event-view.ts'
import { WebhookView } from './webhook-view.ts'

const RESERVED = /^(user-agent|x-webhook-.*|webhook-(id|timestamp|signature))$/i

export const WebhookUrl = v.pipe(
  v.string(),
  v.maxLength(2048, 'must be at most 2048 characters'),
  documented(v.check((s: string) => {
    try {
      const u = new URL(s)
      return u.protocol === 'http:' || u.protocol === 'https:'
    } catch {
      return false
    }
  }, 'must be an absolute http or https URL'), {
    format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]', description: 'An absolute http or https URL', examples: ['https://example.com/hooks/travelops'],
  }),
)

export const WebhookEvents = v.pipe(
  v.array(v.pipe(v.string(), documented(v.check((s: string) => s === '*' || isEventName(s), (issue) => `unknown event name '${String(issue.input)}'`), { enum: ['*', ...EVENT_NAMES] }))),
  v.minLength(1, 'must name at least one event, or ["*"] for all'),
  v.maxLength(EVENT_NAMES.length, `must have at most ${EVENT_NAMES.length} names`),
  documented(v.check((list: string[]) => !list.includes('*') || list.length === 1, '"*" stands alone: it already means every event'), {
    anyOf: [{ maxItems: 1 }, { not: { contains: { const: '*' } } }],
    description: 'Event names, or `["*"]` for every event (`*` stands alone); a name given twice counts once',
    examples: [['order.created', 'order.confirmed']],
  }),
  v.transform((list) => [...new Set(list)]),
)

export const WebhookSecret = v.pipe(v.string(), v.minLength(16, 'must be 16-256 characters'), v.maxLength(256, 'must be 16-256 characters'))

/** Custom headers (CONTRACT §7, §9, §16): token names that are neither ours nor about the connection, body or path, printable ASCII values. */
export const WebhookHeaders = v.pipe(
  v.record(
    v.pipe(
      v.string(),
      v.maxLength(100, 'header names must be at most 100 characters'),
      documented(v.check((name: string) => headerNameProblem(name) === null, (issue) => `header '${String(issue.input)}' ${headerNameProblem(String(issue.input))}`), {
        pattern: HEADER_PATTERNS.name,
      }),
      documented(v.check((name: string) => !RESERVED.test(name), (issue) => `header '${String(issue.input)}' is set by travelops and cannot be overridden`), {
        not: { anyOf: [{ pattern: HEADER_PATTERNS.refused }, { pattern: anyCase(RESERVED.source) }] },
        description: 'An HTTP header name (RFC 9110 token), neither connection-specific nor one travelops sets itself',
      }),
    ),
    v.pipe(
      v.string(),
      v.maxLength(1024, 'values must be at most 1024 characters'),
      documented(v.check((value: string) => headerValueProblem(value) === null, (issue) => `value ${headerValueProblem(String(issue.input))}`), {
        pattern: HEADER_PATTERNS.value,
        description: 'Printable ASCII without leading or trailing spaces',
      }),
    ),
  ),
  v.maxEntries(20, 'must have at most 20 headers'),
)

export const CreateWebhookBody = v.strictObject({
  url: WebhookUrl,
  events: WebhookEvents,
  secret: v.optional(v.pipe(WebhookSecret, v.description('The signing secret. Omitted: one is generated (`whsec_` + base64 of 32 random bytes) and shown once, in the answer'))),
  headers: v.optional(WebhookHeaders),
})

export const UpdateWebhookBody = v.strictObject({
  url: v.optional(WebhookUrl),
  events: v.optional(WebhookEvents),
  secret: v.optional(WebhookSecret),
  headers: v.optional(v.nullable(WebhookHeaders)),
  active: v.optional(v.boolean()),
})

/** POST /v1/webhooks/:id/test: `{}` or `{ "event": "<name>" }`. */
export const TestEventBody = v.optional(v.strictObject({
  event: v.optional(v.pipe(v.picklist(EVENT_NAMES, 'must be an event name'), v.description('Default: the subscription\'s first event; `order.created` for `*`'))),
}))

export const WEBHOOK_READ_ONLY = ['id', 'retry_count', 'created_at', 'updated_at', 'disabled_at', 'disabled_reason', 'failing_since', 'header_names'] as const

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const

export const ListDeliveriesQuery = {
  webhook_id: v.optional(v.pipe(v.string(), v.regex(/^wh_[0-9a-f-]{36}$/, 'must be a webhook id (wh_…)'))),
  status: v.optional(v.picklist(DELIVERY_STATUSES, `must be one of ${DELIVERY_STATUSES.join(', ')}`)),
  event: v.optional(v.picklist(EVENT_NAMES, 'must be an event name')),
  event_id: v.optional(v.pipe(v.string(), v.regex(idPattern('evt'), 'must be an event id (evt_…)'),
    v.description('Only the deliveries of this event (GET /v1/events/{id}): one for each subscription it was sent to'))),
  created_after: v.optional(TimestampQuery),
}

export type CreateWebhookInput = v.InferOutput<typeof CreateWebhookBody>
export type UpdateWebhookInput = v.InferOutput<typeof UpdateWebhookBody>

export { WebhookView, type Webhook } from './webhook-view.ts'

/** The create answer: the subscription, plus the secret the service generated when the body gave none (CONTRACT §16). */
export const CreatedWebhookView = v.pipe(
  v.strictObject({
    ...WebhookView.pipe[0].entries,
    secret: v.pipe(v.optional(v.nullable(v.string())),
      v.description('Only when the body gave no `secret`: the one generated (`whsec_` + base64 of 32 random bytes), shown in this answer only. `null` in an Idempotency-Key replay: it is never kept there')),
  }),
  v.title('CreatedWebhook'),
  v.description('A webhook subscription just created; `secret` only when the service generated it'),
)

export type CreatedWebhook = v.InferOutput<typeof CreatedWebhookView>

const HttpStatus = v.pipe(v.number(), v.integer())

const deliveryEntries = {
  id: out.id('del'),
  webhook_id: v.pipe(out.id('wh'), v.description('The subscription; a deleted subscription\'s records keep its id')),
  event: v.picklist(EVENT_NAMES),
  event_id: out.id('evt'),
  status: v.pipe(v.picklist(DELIVERY_STATUSES), v.description('`pending` until the first attempt finishes, then `delivered` or `failed`')),
  response_code: v.pipe(v.nullable(HttpStatus), v.description('HTTP status of the last attempt; `null` before the first or when no response arrived')),
  attempts: v.pipe(out.Int(0), v.description('Attempts made so far')),
  created_at: out.createdAt,
  delivered_at: out.optionalTimestamp('When the latest successful attempt finished; a later failed manual retry leaves it'),
  last_attempt_at: out.optionalTimestamp('When the latest attempt finished'),
  next_retry_at: out.optionalTimestamp('When the next automatic retry is due; only while `failed` with retries left'),
  payload: EventView,
}

/** A delivery record as lists show it. */
export const DeliveryView = v.pipe(
  v.strictObject(deliveryEntries),
  v.title('Delivery'),
  v.description('A delivery record: one event for one subscription, with the exact body sent as `payload`'),
)

export const DeliveryAttemptView = v.pipe(
  v.strictObject({
    attempt: out.Int(1),
    at: v.pipe(out.Timestamp, v.description('When the attempt started (the request was sent); statistics count attempts by it')),
    trigger: v.pipe(v.picklist(['auto', 'manual']), v.description('`auto`: the first attempt or a scheduled retry; `manual`: a retry asked for')),
    response_code: v.pipe(v.nullable(HttpStatus), v.description('`null` when no complete response arrived in time')),
    duration_ms: out.Int(0),
    error: out.optionalText('Why the attempt failed without a response (timeout, refused, blocked address), else `null`'),
    response_body: out.optionalText('The first 4 KB of the response body as text; `null` when there was no response'),
  }),
  v.title('DeliveryAttempt'),
)

/** The single-record view: the delivery and every attempt, oldest first. */
export const DeliveryDetailView = v.pipe(
  v.strictObject({ ...deliveryEntries, attempt_log: v.array(DeliveryAttemptView) }),
  v.title('DeliveryWithAttempts'),
  v.description('A delivery record with every attempt, oldest first (GET /v1/webhooks/deliveries/{id} and its retry)'),
)

export type Delivery = v.InferOutput<typeof DeliveryView>
export type DeliveryDetail = v.InferOutput<typeof DeliveryDetailView>
