import type { WebhookRow } from '../db/schema.ts'
import { jsonString } from '../lib/json.ts'

/**
 * A subscription as the API shows it (GET /v1/webhooks/:id), never its secret or header values:
 * what the webhooks module answers with, and the `data` of the `webhook.disabled` event the
 * delivery stores write when endpoint health disables one (webhook-disabled.ts). Here, below
 * both, so that the two are one function. The module types it with its valibot view
 * (modules/webhooks/webhook-view.ts).
 */
export interface WebhookRecord {
  id: string
  url: string
  events: string[]
  active: boolean
  retry_count: number
  header_names: string[]
  disabled_at: string | null
  disabled_reason: 'failing' | 'gone' | null
  failing_since: string | null
  created_at: string
  updated_at: string
}

export function toWebhook(row: WebhookRow): WebhookRecord {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    active: row.active === 1,
    retry_count: row.retry_count,
    header_names: _headerNames(row),
    disabled_at: row.disabled_at,
    disabled_reason: row.disabled_reason,
    failing_since: row.failing_since,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

/**
 * `JSON.stringify(toWebhook(row))` written straight from the row, the events as stored
 * (JSON.stringify's own output); of the headers only their names, never a value. Checked against
 * toWebhook() on random rows (test/unit/record-json.test.ts).
 */
export function webhookJson(row: WebhookRow): string {
  return `{"id":${JSON.stringify(row.id)},"url":${JSON.stringify(row.url)},"events":${row.events},"active":${row.active === 1},"retry_count":${row.retry_count},"header_names":${JSON.stringify(_headerNames(row))},"disabled_at":${jsonString(row.disabled_at)},"disabled_reason":${jsonString(row.disabled_reason)},"failing_since":${jsonString(row.failing_since)},"created_at":${JSON.stringify(row.created_at)},"updated_at":${JSON.stringify(row.updated_at)}}`
}

/** The names of a subscription's custom headers (their values are secrets: never shown). */
const _headerNames = (row: WebhookRow): string[] => Object.keys(JSON.parse(row.headers) as Record<string, string>)
