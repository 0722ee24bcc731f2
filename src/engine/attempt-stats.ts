import { sql } from 'kysely'
import type { Outcome } from '../delivery/port.ts'
import { isDelivered } from '../delivery/rules/attempt.ts'
import type { Tx } from '../db/tx.ts'

// attempt_stats (migrations/0013_attempt_rollup.sql): delivery_attempts summed per (tenant,
// subscription, UTC hour, duration), kept equal to those sums by every statement that inserts
// or deletes attempts, in its transaction: the delivery stores add what a cycle recorded (one
// statement per cycle, not one per attempt), retention takes away what it deletes. Stats read it
// for whole hours instead of the attempts (modules/webhooks/stats.ts).

/** One row's worth of attempts: [tenant_id, hour, webhook_id, duration_ms, n, ok]. */
export type StatsDelta = [string, string, string, number, number, number]

/** The hour an attempt made at `at` (an ISO time) is counted in, as stats bucket it. */
export function hourOf(at: string): string {
  return at.slice(0, 13)
}

/**
 * Recorded outcomes summed per attempt_stats row, in key order: the order every writer takes
 * the rows in, so two PostgreSQL transactions adding to the same rows never wait for each other
 * in a circle.
 */
export function statsDeltas(recorded: readonly Outcome[]): StatsDelta[] {
  const sums = new Map<string, StatsDelta>()
  for (const o of recorded) {
    const hour = hourOf(o.at)
    const key = `${o.job.tenant_id}\u0000${hour}\u0000${o.job.webhook_id}\u0000${o.durationMs}`
    const row = sums.get(key)
    if (row) {
      row[4] += 1
      row[5] += isDelivered(o.responseCode) ? 1 : 0
    } else sums.set(key, [o.job.tenant_id, hour, o.job.webhook_id, o.durationMs, 1, isDelivered(o.responseCode) ? 1 : 0])
  }
  return [...sums.values()].sort(compareDeltas)
}

/** SQLite: the deltas (JSON of StatsDelta[]) added in one statement (engine/sqlite/delivery-store.ts). */
export const SQLITE_ADD_STATS = `INSERT INTO attempt_stats (tenant_id, hour, webhook_id, duration_ms, n, ok)
  SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5 FROM json_each(?) WHERE true
  ON CONFLICT (tenant_id, hour, webhook_id, duration_ms) DO UPDATE SET n = n + excluded.n, ok = ok + excluded.ok`

/**
 * Retention, both engines: the attempts of `deliveryIds` (about to be deleted in `tx`, so read
 * before they are) taken away from their rows, and the rows left with none deleted (by the keys
 * the update returned). Bounded as the step is: a batch of deliveries' attempts, summed per row.
 */
export async function subtractAttempts(tx: Tx, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return
  const sums = sql`select a.tenant_id, substr(a.at, 1, 13) as hour, d.webhook_id, a.duration_ms, count(*) as n,
      sum(case when a.response_code between 200 and 299 then 1 else 0 end) as ok
    from delivery_attempts a join deliveries d on d.id = a.delivery_id
    where a.delivery_id in (${sql.join(deliveryIds)}) group by a.tenant_id, substr(a.at, 1, 13), d.webhook_id, a.duration_ms`
  const changed = await sql<{ tenant_id: string; hour: string; webhook_id: string; duration_ms: number; n: number }>`update attempt_stats
    set n = attempt_stats.n - s.n, ok = attempt_stats.ok - s.ok from (${sums}) s
    where attempt_stats.tenant_id = s.tenant_id and attempt_stats.hour = s.hour
      and attempt_stats.webhook_id = s.webhook_id and attempt_stats.duration_ms = s.duration_ms
    returning attempt_stats.tenant_id, attempt_stats.hour, attempt_stats.webhook_id, attempt_stats.duration_ms, attempt_stats.n`.execute(tx)
  // The rows left counting nothing, by their keys (the sums are not worked out a second time).
  const gone = changed.rows.filter((r) => Number(r.n) <= 0)
  if (gone.length === 0) return
  await sql`delete from attempt_stats where (tenant_id, hour, webhook_id, duration_ms) in
    (${sql.join(gone.map((r) => sql`(${r.tenant_id}, ${r.hour}, ${r.webhook_id}, ${Number(r.duration_ms)})`))})`.execute(tx)
}

function compareDeltas(a: StatsDelta, b: StatsDelta): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : a[3] - b[3]
}
