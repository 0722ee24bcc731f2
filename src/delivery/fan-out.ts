import { compiled } from '../db/compiled.ts'
import type { Tx } from '../db/tx.ts'
import { newId } from '../lib/ids.ts'

/**
 * One pending delivery per active subscription of the event's tenant that asked for this
 * event (or for `*`), written in the transaction that wrote the event. Returns how many.
 */
export async function fanOut(tx: Tx, event: { id: string; tenantId: string; name: string; at: string }): Promise<number> {
  const targets = (await _subscriptions(tx, event.tenantId)).filter((w) => _wants(w.events, event.name))
  for (const w of targets) await insertDelivery(tx, newId('del'), event.tenantId, w.id, event.id, event.name, event.at)
  return targets.length
}

// The tenant's active subscriptions (at most --max-webhooks), matched here rather than in SQL:
// the same on both engines, and a few dozen short JSON arrays parse in microseconds.
const _subscriptions = compiled((db, tenantId: string) => db.selectFrom('webhooks').select(['id', 'events'])
  .where('tenant_id', '=', tenantId)
  .where('active', '=', 1)
  .where('deleted_at', 'is', null))

function _wants(events: string, name: string): boolean {
  try {
    const list: unknown = JSON.parse(events)
    return Array.isArray(list) && (list.includes(name) || list.includes('*'))
  } catch {
    return false
  }
}

/** One pending delivery of an event to one subscription, due at once. */
export const insertDelivery = compiled((db, id: string, tenant_id: string, webhook_id: string, event_id: string, event: string, at: string) =>
  db.insertInto('deliveries').values({
    id, tenant_id, webhook_id, event_id, event, status: 'pending', attempts: 0, retries: 0, manual: 0, created_at: at, due_at: at,
  }))
