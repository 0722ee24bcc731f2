import { sql } from 'kysely'
import type { Tx } from '../../db/tx.ts'
import { deliveryIds, leasedJob, type OutboxEvent, type OutboxTarget, type Written } from '../../delivery/fan-out.ts'
import type { Lease } from '../../delivery/port.ts'

/**
 * PostgreSQL's outbox writer (Engine.writeEvent()): what SQLite's writes (engine/sqlite/outbox.ts),
 * where each statement is a round trip: one statement writes the event, finds the subscriptions
 * and writes their deliveries (a second one only when the tenant has more matching
 * subscriptions than delivery ids were sent along).
 *
 * The matching subscriptions, numbered in id order, get the delivery ids sent along; as many
 * ids are sent as the tenant's last event matched (4 at first), and any subscriptions beyond
 * them get theirs from a second statement in the same transaction (same snapshot under
 * SERIALIZABLE, so the same numbering). `events` holds a JSON array of names (the API only ever
 * stores one), matched with jsonb's `?` as delivery/rules/fan-out.ts does on SQLite
 * (test/db/delivery-rules-agree.test.ts holds the two together).
 */
export async function writeEventPostgres(tx: Tx, event: OutboxEvent, lease?: Lease | null): Promise<Written> {
  let ids = deliveryIds(_lastMatched.get(event.tenantId) ?? 4)
  const skip = lease?.skip?.length ? lease.skip : undefined
  const leaseColumns = skip ? sql`case when t.id = any(${skip}::text[]) then null else ${lease!.until} end, case when t.id = any(${skip}::text[]) then null else ${lease!.owner} end`
    : sql`${lease?.until ?? null}, ${lease?.owner ?? null}`
  const matching = sql`select id, url, secret, headers, retry_count, (row_number() over (order by id))::int as n from webhooks
    where tenant_id = ${event.tenantId} and active = 1 and deleted_at is null and (events::jsonb ? ${event.name} or events::jsonb ? '*')`
  const insert = (from: number) => sql`insert into deliveries (id, tenant_id, webhook_id, event_id, event, status, attempts, retries, manual, created_at, due_at, locked_until, locked_by)
    select (${ids}::text[])[t.n - ${from}], ${event.tenantId}, t.id, ${event.id}, ${event.name}, 'pending', 0, 0, 0, ${event.at}, ${event.at}, ${leaseColumns}
    from t where t.n > ${from} and t.n <= ${from + ids.length}`
  // The subscriptions in id order; under a lease with what sending needs.
  const targets = lease ? sql`coalesce(json_agg(json_build_object('id', id, 'url', url, 'secret', secret, 'headers', headers, 'retry_count', retry_count) order by n), '[]')`
    : sql`coalesce(json_agg(json_build_object('id', id) order by n), '[]')`
  const { rows } = await sql<{ targets: OutboxTarget[] }>`with e as (insert into events (id, tenant_id, name, payload, created_at)
      values (${event.id}, ${event.tenantId}, ${event.name}, ${event.payload}, ${event.at})),
    t as (${matching}), d as (${insert(0)})
    select ${targets} as targets from t`.execute(tx)
  const found = rows[0]!.targets
  const matched = found.length
  const given = ids.slice(0, matched)
  if (matched > ids.length) {
    const from = ids.length
    ids = deliveryIds(matched - from)
    given.push(...ids)
    await sql`with t as (${matching}) ${insert(from)}`.execute(tx)
  }
  if (_lastMatched.size >= 10_000 && !_lastMatched.has(event.tenantId)) _lastMatched.clear()
  _lastMatched.set(event.tenantId, matched)
  return { webhookIds: found.map((w) => w.id), jobs: lease ? found.flatMap((w, i) => skip?.includes(w.id) ? [] : [leasedJob(event, given[i]!, w, lease)]) : undefined }
}

/** Per tenant, how many subscriptions its last event matched: how many delivery ids the next one sends along. */
const _lastMatched = new Map<string, number>()
