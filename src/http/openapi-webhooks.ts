import { EVENT_NAMES, type EventName } from '../events/catalog.ts'
import { WEBHOOK_DISABLED } from '../delivery/webhook-disabled.ts'
import { componentRef, type JsonObject } from './openapi-schema.ts'

/**
 * The document's `webhooks` section (OpenAPI 3.1): one entry per event name, describing the
 * POST travelops sends to a subscription's URL — the `Event` body with that name, the §7
 * headers and the Standard Webhooks headers (§11) — with an example body built from the same
 * example records as test events.
 */
export function webhooksSection(example: EventExample): Record<string, JsonObject> {
  const out: Record<string, JsonObject> = {}
  for (const event of EVENT_NAMES) out[event] = { post: _operation(event, example) }
  return out
}

/** The example record (`data`) of an event addressed to `tenantId` at `at`: the webhooks module's exampleData(). */
export type EventExample = (event: EventName, tenantId: string, at: string) => unknown

/** Header parameters of every delivery, for `components.parameters`. */
export const DELIVERY_HEADERS: Record<string, JsonObject> = {
  XWebhookId: _header('X-Webhook-ID', 'The event id (`evt_…`): the same on every attempt and for every subscription; use it to drop duplicates', { type: 'string', pattern: '^evt_' }),
  XWebhookTimestamp: _header('X-Webhook-Timestamp', 'The event\'s `timestamp` (ISO 8601, UTC): when the change happened, the same on every attempt', { type: 'string', format: 'date-time' }),
  XWebhookSignature: _header('X-Webhook-Signature', 'Lower-case hex HMAC-SHA256 of the exact body bytes, keyed with the subscription\'s secret (no prefix)', { type: 'string', pattern: '^[0-9a-f]{64}$' }),
  WebhookId: _header('webhook-id', 'Standard Webhooks: the event id, as `X-Webhook-ID`', { type: 'string', pattern: '^evt_' }),
  WebhookTimestamp: _header('webhook-timestamp', 'Standard Webhooks: Unix time (seconds) of this attempt, so a receiver\'s replay window also admits retries', { type: 'string', pattern: '^[0-9]+$' }),
  WebhookSignature: _header('webhook-signature', 'Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`. A secret of the form `whsec_` + base64 of 24–64 bytes '
    + '(as the service generates) keys it with the decoded bytes: the `standardwebhooks` and `svix` libraries verify it given the secret as it is. '
    + 'Any other secret keys it with its UTF-8 bytes: give the libraries `whsec_` + base64(secret)', { type: 'string', pattern: '^v1,' }),
  UserAgent: _header('User-Agent', '`travelops/<version>`', { type: 'string', pattern: '^travelops/' }),
}

const _EXAMPLE_TENANT = 'ten_00000000-0000-7000-8000-000000000000'
const _EXAMPLE_EVENT = 'evt_00000000-0000-7000-8000-000000000000'
const _EXAMPLE_AT = '2027-05-01T09:30:00.000Z'

function _operation(event: EventName, exampleData: EventExample): JsonObject {
  return {
    operationId: `${event.replace(/\.(\w)/, (_, c: string) => c.toUpperCase())}Event`,
    summary: `The \`${event}\` event`,
    description: `Sent to every active subscription whose \`events\` include \`${event}\` or \`*\`: a POST of the event to the subscription's URL, `
      + `with its custom headers, redirects not followed. ${_data(event)} `
      + 'Verify `X-Webhook-Signature` (or the Standard Webhooks headers) over the exact body bytes before trusting it. '
      + 'A test event (POST /v1/webhooks/{id}/test) has the same shape, with `"test": true` and an example record as `data`.',
    tags: ['Events'],
    security: [],
    parameters: Object.keys(DELIVERY_HEADERS).map((name) => componentRef('parameters', name)),
    requestBody: {
      required: true,
      description: `The \`${event}\` event`,
      content: {
        'application/json': {
          schema: { type: 'object', allOf: [componentRef('schemas', 'Event')], properties: { event: { const: event } } },
          example: { id: _EXAMPLE_EVENT, event, timestamp: _EXAMPLE_AT, tenant_id: _EXAMPLE_TENANT, data: exampleData(event, _EXAMPLE_TENANT, _EXAMPLE_AT) },
        },
      },
    },
    responses: {
      '2XX': { description: 'Any 2xx within the deadline (30 s by default) marks the delivery `delivered`; the response body is recorded, not interpreted' },
      '4XX': { description: 'A failed attempt, retried per §7 (`410 Gone` disables the subscription; `Retry-After` on 429 pushes the next attempt back)' },
      default: { description: 'Any other answer, a timeout or a connection error is a failed attempt, retried per §7 (`Retry-After` on 503 also pushes the next attempt back)' },
    },
  }
}

/** What an event's `data` is. */
function _data(event: EventName): string {
  if (event === WEBHOOK_DISABLED) {
    return 'Sent when endpoint health disables another subscription of the tenant (its receiver answered `410 Gone`, or every attempt failed for --disable-after), '
      + 'never for a PATCH that sets `active: false`; the disabled subscription itself gets none. '
      + '`data` is that subscription exactly as GET /v1/webhooks/{id} returned it after the change: `active: false`, with `disabled_at` and `disabled_reason`.'
  }
  return `\`data\` is the ${event.split('.')[0]!} exactly as GET returned it after the change.`
}

function _header(name: string, description: string, schema: JsonObject): JsonObject {
  return { name, in: 'header', required: true, description, schema }
}
