import type { WebhookRow } from '../db/schema.ts'
import { newId } from '../lib/ids.ts'
import type { OutboxEvent } from './fan-out.ts'
import { webhookJson } from './webhook-json.ts'

/** The event endpoint health emits (CONTRACT §15, joining §8): the one event no route emits. */
export const WEBHOOK_DISABLED = 'webhook.disabled'

/**
 * The `webhook.disabled` event of a subscription endpoint health has just disabled, for the
 * engine's outbox writer (Engine.writeEvent(): the stores call their engine's, in the
 * transaction that disables it): `row` is the subscription as it stands after the change, and
 * `data` is exactly what GET /v1/webhooks/:id then returns (webhookJson()), `disabled_reason`
 * included. The envelope is emit()'s (events/emit.ts), key for key: id, event, timestamp
 * (`at`, the disabling attempt's time, which is also its `disabled_at`), tenant_id, data.
 */
export function webhookDisabledEvent(row: WebhookRow, at: string, id: string = newId('evt')): OutboxEvent {
  const payload = `{"id":${JSON.stringify(id)},"event":"${WEBHOOK_DISABLED}","timestamp":${JSON.stringify(at)},"tenant_id":${JSON.stringify(row.tenant_id)},"data":${webhookJson(row)}}`
  return { id, tenantId: row.tenant_id, name: WEBHOOK_DISABLED, at, payload }
}
