import { sql } from 'kysely'
import { compiled } from '../db/compiled.ts'
import { isPostgres } from '../db/connect.ts'
import type { Tx } from '../db/tx.ts'
import { newId } from '../lib/ids.ts'

/**
 * An event and one pending delivery per active subscription of its tenant that asked for it
 * (or for `*`), written in the caller's transaction. Returns how many deliveries. On SQLite a
 * statement per row (each is a cached statement run in-process); on PostgreSQL, where each
 * statement is a round trip, the event and all its deliveries are one statement.
 */
export async function writeEvent(tx: Tx, event: { id: string; tenantId: string; name: string; at: string; payload: string }): Promise<number> {
  const targets = (await _subscriptions(tx, event.tenantId)).filter((w) => _wants(w.events, event.name))
  if (isPostgres(tx)) {
    await sql`with e as (insert into events (id, tenant_id, name, payload, created_at)
        values (${event.id}, ${event.tenantId}, ${event.name}, ${event.payload}, ${event.at}))
      insert into deliveries (id, tenant_id, webhook_id, event_id, event, status, attempts, retries, manual, created_at, due_at)
      select d.id, ${event.tenantId}, d.webhook_id, ${event.id}, ${event.name}, 'pending', 0, 0, 0, ${event.at}, ${event.at}
      from unnest(${targets.map(() => newId('del'))}::text[], ${targets.map((w) => w.id)}::text[]) as d(id, webhook_id)`.execute(tx)
    return targets.length
  }
  await insertEvent(tx, event.id, event.tenantId, event.name, event.payload, event.at)
  for (const w of targets) await insertDelivery(tx, newId('del'), event.tenantId, w.id, event.id, event.name, event.at)
  return targets.length
}

export const insertEvent = compiled((db, id: string, tenant_id: string, name: string, payload: string, created_at: string) =>
  db.insertInto('events').values({ id, tenant_id, name, payload, created_at }))

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
