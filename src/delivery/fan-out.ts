import { sql } from 'kysely'
import { compiled } from '../db/compiled.ts'
import { isPostgres } from '../db/connect.ts'
import { storedHeaders } from './stored-headers.ts'
import type { Tx } from '../db/tx.ts'
import { newId } from '../lib/ids.ts'
import type { Job, Lease } from './port.ts'

/** What writeEvent() wrote: the subscriptions given a delivery, and, under a lease, those deliveries as the worker's jobs. */
export interface Written {
  hooks: string[]
  jobs?: Job[]
}

interface Target { id: string; url: string; secret: string; headers: string; retry_count: number }

/**
 * An event and one pending delivery per active subscription of its tenant that asked for it
 * (or for `*`), written in the caller's transaction. Returns the subscriptions given a
 * delivery. With a `lease` (the worker of the process committing, when it has room), the
 * deliveries are written already leased to that worker and come back as its jobs, with what
 * sending needs (the subscription's url, secret, headers): once the transaction commits the
 * worker sends them at once, with no claim in between (worker.ts) — all but those of the
 * subscriptions the lease skips (those that cannot start an attempt now), written unleased,
 * with no job. Without one, the worker's
 * fast path claims from the subscriptions returned. On SQLite a statement per row (each is a
 * cached statement run in-process), the subscriptions matched here; on PostgreSQL, where each
 * statement is a round trip, one statement writes the event, finds the subscriptions and
 * writes their deliveries (a second one only when the tenant has more matching subscriptions
 * than delivery ids were sent along).
 */
export async function writeEvent(tx: Tx, event: EventRow, lease?: Lease | null): Promise<Written> {
  if (isPostgres(tx)) return _writeEventPg(tx, event, lease ?? undefined)
  const targets = (await _subscriptions(tx, event.tenantId)).filter((w) => _wants(w.events, event.name))
  await insertEvent(tx, event.id, event.tenantId, event.name, event.payload, event.at)
  const ids = targets.map(() => newId('del'))
  const jobs: Job[] | undefined = lease ? [] : undefined
  for (const [i, w] of targets.entries()) {
    const l = lease && !lease.skip?.includes(w.id) ? lease : null
    await insertDelivery(tx, ids[i]!, event.tenantId, w.id, event.id, event.name, event.at, l?.until ?? null, l?.owner ?? null)
    if (l) jobs!.push(_job(event, ids[i]!, w, l))
  }
  return { hooks: targets.map((w) => w.id), jobs }
}

interface EventRow { id: string; tenantId: string; name: string; at: string; payload: string }

/** A delivery just written under a lease, as the worker's job (what a claim would have returned). */
function _job(event: EventRow, id: string, w: Target, lease: Lease): Job {
  return {
    id, tenant_id: event.tenantId, webhook_id: w.id, event_id: event.id, event: event.name, attempts: 0, retries: 0, manual: 0,
    next_retry_at: null, status: 'pending', owner: lease.owner, url: w.url, secret: w.secret, headers: storedHeaders(w.headers),
    retryCount: Number(w.retry_count), payload: event.payload, eventAt: event.at,
  }
}

/**
 * PostgreSQL: the matching subscriptions, numbered in id order, get the delivery ids sent
 * along; as many ids are sent as the tenant's last event matched (4 at first), and any
 * subscriptions beyond them get theirs from a second statement in the same transaction (same
 * snapshot under SERIALIZABLE, so the same numbering). `events` holds a JSON array of names
 * (the API only ever stores one), matched with jsonb's `?` as _wants() does on SQLite.
 */
async function _writeEventPg(tx: Tx, event: EventRow, lease?: Lease): Promise<Written> {
  let ids = _deliveryIds(_lastMatched.get(event.tenantId) ?? 4)
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
  const { rows } = await sql<{ targets: Target[] }>`with e as (insert into events (id, tenant_id, name, payload, created_at)
      values (${event.id}, ${event.tenantId}, ${event.name}, ${event.payload}, ${event.at})),
    t as (${matching}), d as (${insert(0)})
    select ${targets} as targets from t`.execute(tx)
  const found = rows[0]!.targets
  const matched = found.length
  const given = ids.slice(0, matched)
  if (matched > ids.length) {
    const from = ids.length
    ids = _deliveryIds(matched - from)
    given.push(...ids)
    await sql`with t as (${matching}) ${insert(from)}`.execute(tx)
  }
  if (_lastMatched.size >= 10_000 && !_lastMatched.has(event.tenantId)) _lastMatched.clear()
  _lastMatched.set(event.tenantId, matched)
  return { hooks: found.map((w) => w.id), jobs: lease ? found.flatMap((w, i) => skip?.includes(w.id) ? [] : [_job(event, given[i]!, w, lease)]) : undefined }
}

/** Per tenant, how many subscriptions its last event matched: how many delivery ids the next one sends along. */
const _lastMatched = new Map<string, number>()
const _deliveryIds = (n: number) => Array.from({ length: n }, () => newId('del'))

export const insertEvent = compiled((db, id: string, tenant_id: string, name: string, payload: string, created_at: string) =>
  db.insertInto('events').values({ id, tenant_id, name, payload, created_at }))

// The tenant's active subscriptions (at most --max-webhooks), matched here rather than in SQL:
// the same on both engines, and a few dozen short JSON arrays parse in microseconds.
const _subscriptions = compiled((db, tenantId: string) => db.selectFrom('webhooks').select(['id', 'events', 'url', 'secret', 'headers', 'retry_count'])
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

/** One pending delivery of an event to one subscription, due at once; leased to a worker when `locked_by` is given (`writeEvent` under a lease). */
export const insertDelivery = compiled((db, id: string, tenant_id: string, webhook_id: string, event_id: string, event: string, at: string, locked_until: string | null, locked_by: string | null) =>
  db.insertInto('deliveries').values({
    id, tenant_id, webhook_id, event_id, event, status: 'pending', attempts: 0, retries: 0, manual: 0, created_at: at, due_at: at, locked_until, locked_by,
  }))
