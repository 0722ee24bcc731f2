import { sql } from 'kysely'
import type { Db } from './connect.ts'

// The queue's gauges of /metrics (http/metrics.ts), through the engine: Engine.countQueued()
// (SQLite's in engine/sqlite/queue-count.ts, one count on PostgreSQL) and Engine.earliestDue()
// (this file's, on the database the engine gives).

/**
 * Queued deliveries one step of SQLite's count reads at most: about 2 ms of index entries
 * when the pages are cached. Counted in one statement, a million held SQLite — and so every
 * other request — for 28–36 ms at each scrape of GET /metrics.
 */
export const QUEUE_COUNT_SLICE = 50_000

/**
 * Subscriptions one step of the earliest due time looks at: two index seeks each, ~0.85 ms a
 * thousand on SQLite. In one statement, 20,000 subscriptions with a queue held SQLite 15–18 ms.
 */
export const EARLIEST_DUE_CHUNK = 1_000

/**
 * The earliest due time of any queued delivery (due now or later), or null:
 * `travelops_oldest_due_delivery_age_seconds`. Each subscription's earliest, one seek each in
 * deliveries_webhook_due (webhook_id, due_at), the subscriptions found by skipping from one to
 * the next as the delivery store does (on PostgreSQL on its pool, whose planner never scans the
 * table for it: the engine passes its delivery pool), `chunk` subscriptions a statement and a turn of the event loop between two. A
 * `min(due_at)` over the queue read all of that index instead — 31 ms at a million queued
 * deliveries on SQLite, every scrape, with every other request waiting.
 */
export async function earliestDue(db: Db, chunk = EARLIEST_DUE_CHUNK): Promise<string | null> {
  let earliest: string | null = null
  for (let after = ''; ;) {
    const r = (await sql<{ last: string | null; first: string | null; n: number }>`
      with recursive webhook_ids(id, n) as (
        select (select webhook_id from deliveries where due_at is not null and webhook_id > ${after} order by webhook_id limit 1), 1
        union all
        select (select webhook_id from deliveries where due_at is not null and webhook_id > webhook_ids.id order by webhook_id limit 1), webhook_ids.n + 1
        from webhook_ids where webhook_ids.id is not null and webhook_ids.n < ${chunk})
      select max(id) as last, count(id) as n,
        min((select due_at from deliveries where webhook_id = webhook_ids.id and due_at is not null order by due_at limit 1)) as first
      from webhook_ids where webhook_ids.id is not null`.execute(db)).rows[0]
    if (r?.first != null && (earliest === null || r.first < earliest)) earliest = r.first
    if (!r || r.last === null || Number(r.n) < chunk) return earliest
    after = r.last
    await new Promise((resolve) => setImmediate(resolve))
  }
}
