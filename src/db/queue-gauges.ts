import { sql, type RawBuilder } from 'kysely'
import { deliveryDbOf, isPostgres, type Db } from './connect.ts'

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

type Entry = { webhook_id: string; due_at: string; rowid: number }

/**
 * How many deliveries are queued (due now or later): `travelops_deliveries_queued`.
 *
 * On PostgreSQL one count: the server does the work, serve only waits for it. On SQLite the
 * count walks the queue's index, deliveries_webhook_due, in its order (webhook_id, due_at,
 * rowid), `slice` entries a step and a turn of the event loop between two steps: a step finds the
 * entry `slice` places further on (OFFSET steps over the index as a count does) and the next goes
 * on after it; a range that ends before (the step found no such entry) is counted on the next
 * turn. After an entry come three ranges, each one seek: the same subscription and due time with
 * a greater rowid, the same subscription due later, the subscriptions after it. (A row value
 * `(webhook_id, due_at, rowid) > (?, ?, ?)` would be sought by its first column alone, and every
 * step would read its subscription's earlier entries again.)
 *
 * A queue longer than a slice is counted over several turns, not in one snapshot: a delivery that
 * moved meanwhile (recorded, retried, claimed, dropped) can be counted twice or not at all, so the
 * figure is as exact as the few milliseconds of a scrape leave it.
 */
export async function countQueued(db: Db, slice = QUEUE_COUNT_SLICE): Promise<number> {
  if (isPostgres(db)) {
    const r = await db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('due_at', 'is not', null).executeTakeFirst()
    return Number(r?.n ?? 0)
  }
  let n = 0
  // What is left to count, in the index's order; `short` once a step found it shorter than a slice.
  let ranges: { where: RawBuilder<unknown>; short?: true }[] = [{ where: sql`due_at is not null` }]
  for (let first = true; ranges.length > 0; first = false) {
    if (!first) await new Promise((resolve) => setImmediate(resolve))
    const range = ranges[0]!
    if (range.short) {
      const r = await sql<{ n: number }>`select count(*) as n from deliveries indexed by deliveries_webhook_due where ${range.where}`.execute(db)
      n += Number(r.rows[0]?.n ?? 0)
      ranges.shift()
      continue
    }
    const next = (await sql<Entry>`select webhook_id, due_at, rowid from deliveries indexed by deliveries_webhook_due
      where ${range.where} order by webhook_id, due_at, rowid limit 1 offset ${slice - 1}`.execute(db)).rows[0]
    if (next) {
      n += slice
      ranges = _after(next)
    } else range.short = true // counted on the next turn
  }
  return n
}

/** The queue's entries after `e`, as three ranges of the index in its order. */
function _after(e: Entry): { where: RawBuilder<unknown> }[] {
  return [
    { where: sql`webhook_id = ${e.webhook_id} and due_at = ${e.due_at} and rowid > ${e.rowid}` },
    { where: sql`webhook_id = ${e.webhook_id} and due_at > ${e.due_at}` },
    { where: sql`webhook_id > ${e.webhook_id} and due_at is not null` },
  ]
}

/**
 * The earliest due time of any queued delivery (due now or later), or null:
 * `travelops_oldest_due_delivery_age_seconds`. Each subscription's earliest, one seek each in
 * deliveries_webhook_due (webhook_id, due_at), the subscriptions found by skipping from one to
 * the next as the delivery store does (on PostgreSQL on its pool, whose planner never scans the
 * table for it), `chunk` subscriptions a statement and a turn of the event loop between two. A
 * `min(due_at)` over the queue read all of that index instead — 31 ms at a million queued
 * deliveries on SQLite, every scrape, with every other request waiting.
 */
export async function earliestDue(db: Db, chunk = EARLIEST_DUE_CHUNK): Promise<string | null> {
  let earliest: string | null = null
  for (let after = ''; ;) {
    const r = (await sql<{ last: string | null; first: string | null; n: number }>`
      with recursive hooks(id, n) as (
        select (select webhook_id from deliveries where due_at is not null and webhook_id > ${after} order by webhook_id limit 1), 1
        union all
        select (select webhook_id from deliveries where due_at is not null and webhook_id > hooks.id order by webhook_id limit 1), hooks.n + 1
        from hooks where hooks.id is not null and hooks.n < ${chunk})
      select max(id) as last, count(id) as n,
        min((select due_at from deliveries where webhook_id = hooks.id and due_at is not null order by due_at limit 1)) as first
      from hooks where hooks.id is not null`.execute(deliveryDbOf(db))).rows[0]
    if (r?.first != null && (earliest === null || r.first < earliest)) earliest = r.first
    if (!r || r.last === null || Number(r.n) < chunk) return earliest
    after = r.last
    await new Promise((resolve) => setImmediate(resolve))
  }
}
