import { sql } from 'kysely'
import { compiled } from '../db/compiled.ts'
import { isPostgres } from '../db/connect.ts'
import type { Tx } from '../db/tx.ts'
import { newId } from '../lib/ids.ts'

/**
 * An event and one pending delivery per active subscription of its tenant that asked for it
 * (or for `*`), written in the caller's transaction. Returns the subscriptions given a
 * delivery (what the worker's fast path claims from once the transaction commits). On SQLite a
 * statement per row (each is a cached statement run in-process), the subscriptions matched
 * here; on PostgreSQL, where each statement is a round trip, one statement writes the event,
 * finds the subscriptions and writes their deliveries (a second one only when the tenant has
 * more matching subscriptions than delivery ids were sent along).
 */
export async function writeEvent(tx: Tx, event: { id: string; tenantId: string; name: string; at: string; payload: string }): Promise<string[]> {
  if (isPostgres(tx)) return _writeEventPg(tx, event)
  const targets = (await _subscriptions(tx, event.tenantId)).filter((w) => _wants(w.events, event.name))
  await insertEvent(tx, event.id, event.tenantId, event.name, event.payload, event.at)
  for (const w of targets) await insertDelivery(tx, newId('del'), event.tenantId, w.id, event.id, event.name, event.at)
  return targets.map((w) => w.id)
}

/**
 * PostgreSQL: the matching subscriptions, numbered in id order, get the delivery ids sent
 * along; as many ids are sent as the tenant's last event matched (4 at first), and any
 * subscriptions beyond them get theirs from a second statement in the same transaction (same
 * snapshot under SERIALIZABLE, so the same numbering). `events` holds a JSON array of names
 * (the API only ever stores one), matched with jsonb's `?` as _wants() does on SQLite.
 */
async function _writeEventPg(tx: Tx, event: { id: string; tenantId: string; name: string; at: string; payload: string }): Promise<string[]> {
  let ids = _deliveryIds(_lastMatched.get(event.tenantId) ?? 4)
  const matching = sql`select id, (row_number() over (order by id))::int as n from webhooks
    where tenant_id = ${event.tenantId} and active = 1 and deleted_at is null and (events::jsonb ? ${event.name} or events::jsonb ? '*')`
  const insert = (from: number) => sql`insert into deliveries (id, tenant_id, webhook_id, event_id, event, status, attempts, retries, manual, created_at, due_at)
    select (${ids}::text[])[t.n - ${from}], ${event.tenantId}, t.id, ${event.id}, ${event.name}, 'pending', 0, 0, 0, ${event.at}, ${event.at}
    from t where t.n > ${from} and t.n <= ${from + ids.length}`
  const { rows } = await sql<{ hooks: string[] | null }>`with e as (insert into events (id, tenant_id, name, payload, created_at)
      values (${event.id}, ${event.tenantId}, ${event.name}, ${event.payload}, ${event.at})),
    t as (${matching}), d as (${insert(0)})
    select array_agg(id order by n) as hooks from t`.execute(tx)
  const hooks = rows[0]!.hooks ?? []
  const matched = hooks.length
  if (matched > ids.length) {
    const from = ids.length
    ids = _deliveryIds(matched - from)
    await sql`with t as (${matching}) ${insert(from)}`.execute(tx)
  }
  if (_lastMatched.size >= 10_000 && !_lastMatched.has(event.tenantId)) _lastMatched.clear()
  _lastMatched.set(event.tenantId, matched)
  return hooks
}

/** Per tenant, how many subscriptions its last event matched: how many delivery ids the next one sends along. */
const _lastMatched = new Map<string, number>()
const _deliveryIds = (n: number) => Array.from({ length: n }, () => newId('del'))

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
