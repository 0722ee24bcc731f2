import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import * as v from 'valibot'
import type { WebhookRow } from '../../src/db/schema.ts'
import { WEBHOOK_DISABLED, webhookDisabledEvent } from '../../src/delivery/webhook-disabled.ts'
import { toWebhook } from '../../src/delivery/webhook-json.ts'
import { EVENT_NAMES } from '../../src/events/catalog.ts'
import { EventView } from '../../src/modules/webhooks/event-view.ts'

// webhookDisabledEvent(): the event the delivery stores write when endpoint health disables a
// subscription (CONTRACT §15), from the row as the disabling left it.

const time = fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }).map((d) => d.toISOString())
const text = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('"', '\\', '\u2028', '€', '</script>', '__proto__'))
/** A row as a store's disabling leaves it: inactive, disabled at the attempt's time, for a reason. */
const disabledRows = fc.record({
  id: fc.uuid().map((u) => `wh_${u}`), tenant_id: fc.uuid().map((u) => `ten_${u}`), path: text,
  events: fc.oneof(fc.constant(['*']), fc.subarray([...EVENT_NAMES], { minLength: 1 })), secret: text.map((s) => `whsec_${s}`),
  headers: fc.dictionary(fc.stringMatching(/^[A-Za-z0-9-]{1,20}$/), text.map((s) => `value:${s}`), { maxKeys: 3 }),
  retry_count: fc.integer({ min: 0, max: 10 }), created_at: time, failing_since: time, at: time, reason: fc.constantFrom('failing' as const, 'gone' as const),
}).map((r): { row: WebhookRow; at: string } => ({
  at: r.at,
  row: {
    id: r.id, tenant_id: r.tenant_id, url: `https://hooks.example.com/${encodeURIComponent(r.path)}`, events: JSON.stringify(r.events), secret: r.secret,
    headers: JSON.stringify(r.headers), active: 0, retry_count: r.retry_count, created_at: r.created_at, updated_at: r.at, deleted_at: null,
    failing_since: r.failing_since, disabled_at: r.at, disabled_reason: r.reason,
  },
}))

describe('webhookDisabledEvent()', () => {
  it('is emit()\'s envelope byte for byte, with the subscription as GET shows it as data, for the outbox', () => {
    fc.assert(fc.property(disabledRows, fc.uuid(), ({ row, at }, u) => {
      const event = webhookDisabledEvent(row, at, `evt_${u}`)
      assert.equal(event.payload, JSON.stringify({ id: `evt_${u}`, event: 'webhook.disabled', timestamp: at, tenant_id: row.tenant_id, data: toWebhook(row) }))
      assert.deepEqual({ ...event, payload: undefined }, { id: `evt_${u}`, tenantId: row.tenant_id, name: 'webhook.disabled', at, payload: undefined })
    }), { numRuns: 500 })
  })

  it('is an Event as the API documents it, and never carries the secret or a header value', () => {
    fc.assert(fc.property(disabledRows, ({ row, at }) => {
      const event = webhookDisabledEvent(row, at)
      const parsed = v.safeParse(EventView, JSON.parse(event.payload))
      assert.ok(parsed.success, JSON.stringify(parsed.issues?.map((i) => [i.path?.map((p) => p.key).join('.'), i.message])))
      assert.ok(!event.payload.includes(row.secret), 'no secret')
      for (const value of Object.values(JSON.parse(row.headers) as Record<string, string>)) assert.ok(!event.payload.includes(JSON.stringify(value)), 'no header value')
    }), { numRuns: 300 })
  })

  it('gives each event an id of its own, and its name is in the catalog', () => {
    const [{ row, at }] = fc.sample(disabledRows, 1) as [{ row: WebhookRow; at: string }]
    const a = webhookDisabledEvent(row, at)
    const b = webhookDisabledEvent(row, at)
    assert.match(a.id, /^evt_[0-9a-f-]{36}$/)
    assert.notEqual(a.id, b.id)
    assert.ok((EVENT_NAMES as readonly string[]).includes(WEBHOOK_DISABLED))
  })
})
