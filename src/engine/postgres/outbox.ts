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
 * them get theirs from a second statement in the same transaction, which names them. `events` holds a JSON array of names (the API only ever
 * stores one), matched with jsonb's `?` as delivery/rules/fan-out.ts does on SQLite
 * (test/db/delivery-rules-agree.test.ts holds the two together).
 */
export async function writeEventPostgres(tx: Tx, event: OutboxEvent, lease?: Lease | null): Promise<Written> {
  const ids = deliveryIds(_lastMatched.get(event.tenantId) ?? 4)
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
    // The subscriptions the first statement found beyond the ids sent, named outright: not
    // matched again, which under READ COMMITTED (the worker's cycle, webhook.disabled) could
    // number them otherwise if a subscription changed between the two statements.
    const rest = found.slice(ids.length)
    const more = deliveryIds(rest.length)
    given.push(...more)
    const owner = (w: OutboxTarget) => lease && !skip?.includes(w.id) ? lease : null
    await sql`insert into deliveries (id, tenant_id, webhook_id, event_id, event, status, attempts, retries, manual, created_at, due_at, locked_until, locked_by)
      select x.id, ${event.tenantId}, x.webhook_id, ${event.id}, ${event.name}, 'pending', 0, 0, 0, ${event.at}, ${event.at}, x.locked_until, x.locked_by
      from unnest(${more}::text[], ${rest.map((w) => w.id)}::text[], ${rest.map((w) => owner(w)?.until ?? null)}::text[], ${rest.map((w) => owner(w)?.owner ?? null)}::text[])
        as x(id, webhook_id, locked_until, locked_by)`.execute(tx)
  }
  if (_lastMatched.size >= 10_000 && !_lastMatched.has(event.tenantId)) _lastMatched.clear()
  _lastMatched.set(event.tenantId, matched)
  return { webhookIds: found.map((w) => w.id), jobs: lease ? found.flatMap((w, i) => skip?.includes(w.id) ? [] : [leasedJob(event, given[i]!, w, lease)]) : undefined }
}

/** Per tenant, how many subscriptions its last event matched: how many delivery ids the next one sends along. */
const _lastMatched = new Map<string, number>()
