import * as v from 'valibot'
import { EVENT_NAMES, isEventName } from '../../events/catalog.ts'
import { TimestampQuery } from '../fields.ts'

const RESERVED = /^(content-type|content-length|host|user-agent|x-webhook-.*)$/i
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/

export const WebhookUrl = v.pipe(
  v.string(),
  v.maxLength(2048, 'must be at most 2048 characters'),
  v.check((s) => {
    try {
      const u = new URL(s)
      return u.protocol === 'http:' || u.protocol === 'https:'
    } catch {
      return false
    }
  }, 'must be an absolute http or https URL'),
)

export const WebhookEvents = v.pipe(
  v.array(v.pipe(v.string(), v.check((s) => s === '*' || isEventName(s), (issue) => `unknown event name '${String(issue.input)}'`))),
  v.minLength(1, 'must name at least one event, or ["*"] for all'),
  v.maxLength(EVENT_NAMES.length, `must have at most ${EVENT_NAMES.length} names`),
  v.check((list) => !list.includes('*') || list.length === 1, '"*" stands alone: it already means every event'),
  v.transform((list) => [...new Set(list)]),
)

export const WebhookSecret = v.pipe(v.string(), v.minLength(16, 'must be 16-256 characters'), v.maxLength(256, 'must be 16-256 characters'))

export const WebhookHeaders = v.pipe(
  v.record(
    v.pipe(
      v.string(),
      v.regex(TOKEN, 'must be a valid header name'),
      v.check((name) => !RESERVED.test(name), (issue) => `header '${String(issue.input)}' is set by travelops and cannot be overridden`),
    ),
    v.pipe(v.string(), v.maxLength(1024, 'values must be at most 1024 characters'), v.regex(/^[^\r\n\0]*$/, 'values must not contain line breaks')),
  ),
  v.check((h) => Object.keys(h).length <= 20, 'must have at most 20 headers'),
)

export const CreateWebhookBody = v.strictObject({
  url: WebhookUrl,
  events: WebhookEvents,
  secret: WebhookSecret,
  headers: v.optional(WebhookHeaders),
})

export const UpdateWebhookBody = v.strictObject({
  url: v.optional(WebhookUrl),
  events: v.optional(WebhookEvents),
  secret: v.optional(WebhookSecret),
  headers: v.optional(v.nullable(WebhookHeaders)),
  active: v.optional(v.boolean()),
})

export const WEBHOOK_READ_ONLY = ['id', 'retry_count', 'created_at', 'updated_at'] as const

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const

export const ListDeliveriesQuery = {
  webhook_id: v.optional(v.pipe(v.string(), v.regex(/^wh_[0-9a-f-]{36}$/, 'must be a webhook id (wh_…)'))),
  status: v.optional(v.picklist(DELIVERY_STATUSES, `must be one of ${DELIVERY_STATUSES.join(', ')}`)),
  event: v.optional(v.picklist(EVENT_NAMES, 'must be an event name')),
  created_after: v.optional(TimestampQuery),
}

export type CreateWebhookInput = v.InferOutput<typeof CreateWebhookBody>
export type UpdateWebhookInput = v.InferOutput<typeof UpdateWebhookBody>

/** A subscription as the API shows it: never its secret or header values. */
export interface Webhook {
  id: string
  url: string
  events: string[]
  active: boolean
  retry_count: number
  header_names: string[]
  created_at: string
  updated_at: string
}

export interface Delivery {
  id: string
  webhook_id: string
  event: string
  event_id: string
  status: (typeof DELIVERY_STATUSES)[number]
  response_code: number | null
  attempts: number
  created_at: string
  delivered_at: string | null
  last_attempt_at: string | null
  next_retry_at: string | null
  payload: unknown
  attempt_log?: { attempt: number; at: string; trigger: string; response_code: number | null; duration_ms: number; error: string | null; response_body: string | null }[]
}
