// The API's own types, inferred from the same valibot schemas that document it (type-only:
// nothing of the server is bundled).
export type { CreatedWebhook, Webhook, Delivery, DeliveryDetail } from '../src/modules/webhooks/schema.ts'
export type { StatsRow } from '../src/modules/webhooks/stats.ts'
export type { EventType } from '../src/modules/webhooks/catalog.ts'
export type { EventBody } from '../src/modules/webhooks/event-view.ts'
export type { ApiKey, CreatedApiKey } from '../src/modules/keys/schema.ts'
export type { SessionInfo, TenantSummary } from '../src/modules/dashboard/schema.ts'

export interface Page<T> {
  data: T[]
  has_more: boolean
  next_cursor: string | null
}
