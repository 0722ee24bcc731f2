import * as v from 'valibot'
import { EVENT_NAMES } from '../../events/catalog.ts'
import * as out from '../view-fields.ts'

// Apart from schema.ts, whose delivery views hold the events (event-view.ts), because the
// `webhook.disabled` event (CONTRACT §15) holds this view as its `data`.

/** A subscription as the API shows it: never its secret or header values. */
export const WebhookView = v.pipe(
  v.strictObject({
    id: out.id('wh'),
    url: v.pipe(v.string(), v.url()),
    events: v.pipe(v.array(v.picklist(['*', ...EVENT_NAMES])), v.description('The event names sent to this subscription; `["*"]` for every event')),
    active: v.boolean(),
    retry_count: v.pipe(out.Int(0), v.description('Automatic retries after a failed attempt')),
    header_names: v.pipe(v.array(v.string()), v.description('Names of the custom headers sent with every delivery; their values are never shown')),
    disabled_at: out.optionalTimestamp('When the delivery worker disabled this subscription (endpoint health); `null` otherwise. `PATCH {"active": true}` clears it'),
    disabled_reason: v.pipe(v.nullable(v.picklist(['failing', 'gone'])),
      v.description('`failing`: every attempt failed for --disable-after; `gone`: the receiver answered 410; `null` when not disabled by the worker')),
    failing_since: out.optionalTimestamp('When the current run of failed attempts began; `null` after a success (the dashboard shows such a subscription as failing)'),
    created_at: out.createdAt,
    updated_at: out.updatedAt,
  }),
  v.title('Webhook'),
  v.description('A webhook subscription as the API returns it: never its secret or header values'),
)

export type Webhook = v.InferOutput<typeof WebhookView>
