import { sql, type RawBuilder } from 'kysely'
import type { Db } from '../../db/connect.ts'
import { QUEUE_COUNT_SLICE } from '../../db/queue-gauges.ts'

type Entry = { webhook_id: string; due_at: string; rowid: number }

/**
 * How many deliveries are queued (due now or later): `travelops_deliveries_queued`, SQLite's
 * Engine.countQueued() (on PostgreSQL one count: the server does the work, serve only waits
 * for it).
 *
 * The count walks the queue's index, deliveries_webhook_due, in its order (webhook_id, due_at,
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

