import { sql } from 'kysely'
import type { Db } from '../db/connect.ts'
import type { OpenDb } from './port.ts'
import type { Database } from '../db/schema.ts'
import { UnstorableRow } from './unstorable.ts'

export { UnstorableRow }

// `travelops db copy` (CONTRACT §10): every row of one travelops database into another, empty
// one, either engine to either engine. The source is read in one snapshot (a read transaction
// that never blocks its writers), the target written in one transaction, so a failed copy
// leaves the target as empty as it was. Rows are read and written in primary-key order, 500
// at a time. What differs by engine (the snapshot, which rows PostgreSQL refuses) is the
// engine's (Engine.snapshot(), findUnstorable(), refusesNul).

type Table = keyof Database

/**
 * Every table with rows to copy, parents before children (foreign keys), with its primary key.
 * `omit`: columns one engine keeps for itself, left to the target's default (events.tx, the
 * writing transaction PostgreSQL's event feed orders by: migration postgres/0020; SQLite has none).
 */
export const COPIED_TABLES: readonly { name: Table; key: string[]; batch?: number; omit?: string[] }[] = [
  { name: 'tenants', key: ['id'] },
  { name: 'api_keys', key: ['id'] },
  { name: 'counters', key: ['tenant_id', 'name'] },
  // Rows as large as an answer (up to ~1 MB: a record of a 1 MB body) or a window of a delivery's attempt log (~2 MB): fewer at a time.
  { name: 'idempotency_keys', key: ['key_id', 'idem_key'], batch: 50 },
  { name: 'idempotency_parts', key: ['key_id', 'idem_key', 'created_at', 'part'], batch: 4 },
  { name: 'orders', key: ['id'] },
  { name: 'events', key: ['id'], omit: ['tx'] },
  { name: 'customers', key: ['id'] },
  { name: 'products', key: ['id'] },
  { name: 'itineraries', key: ['id'] },
  { name: 'invoices', key: ['id'] },
  { name: 'payments', key: ['id'] },
  { name: 'suppliers', key: ['id'] },
  { name: 'inquiries', key: ['id'] },
  { name: 'content', key: ['id'] },
  { name: 'webhooks', key: ['id'] },
  { name: 'deliveries', key: ['id'] },
  { name: 'delivery_attempts', key: ['delivery_id', 'attempt'] },
  { name: 'attempt_stats', key: ['tenant_id', 'hour', 'webhook_id', 'duration_ms'] },
  { name: 'rate_windows', key: ['key_id', 'hour'] },
]
// Not copied: schema_migrations (the target has its own) and serve_processes (which processes
// run on the source says nothing about the target), nor dashboard_links and dashboard_sessions
// (sign-ins belong to the server that issued them: sign in again on the new database).

const BATCH = 500

export interface CopyProgress {
  table(name: string, total: number): void
  rows(name: string, done: number, total: number): void
}

/** Row counts per table. */
export type Counts = Record<string, number>

export async function countRows(db: Db): Promise<Counts> {
  const counts: Counts = {}
  for (const t of COPIED_TABLES) {
    const row = await db.selectFrom(t.name).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    counts[t.name] = Number(row.n)
  }
  return counts
}

/** The first table of `db` that holds a row, or undefined when every copied table is empty. */
export async function firstNonEmpty(db: Db): Promise<string | undefined> {
  for (const t of COPIED_TABLES) {
    if (await db.selectFrom(t.name).select(sql`1`.as('x')).limit(1).executeTakeFirst()) return t.name
  }
  return undefined
}

/** The first row of the source that PostgreSQL could not store (its engine looks: Engine.findUnstorable()), read before the target is touched. */
export function findUnstorable(from: OpenDb): Promise<UnstorableRow | undefined> {
  return from.engine.findUnstorable()
}

function _assertStorable(t: (typeof COPIED_TABLES)[number], rows: Record<string, unknown>[]): void {
  for (const row of rows) {
    for (const column in row) {
      if (_hasNul(row[column])) throw new UnstorableRow(t.name, t.key.map((k) => String(row[k])).join(', '), column, 'no row was written')
    }
  }
}

const _hasNul = (value: unknown): boolean => (typeof value === 'string' ? value.includes('\0') : value instanceof Uint8Array && value.includes(0))

/**
 * Copies every row of `from` into `to` (migrated, every table empty). Returns the counts read
 * from the source snapshot; the caller compares them with the target's afterwards.
 */
export async function copyRows(from: OpenDb, to: OpenDb, progress?: CopyProgress): Promise<Counts> {
  return from.engine.snapshot(async (src) => {
    const totals = await countRows(src)
    await to.db.transaction().execute(async (dst) => {
      for (const t of COPIED_TABLES) {
        const total = totals[t.name]!
        progress?.table(t.name, total)
        let after: unknown[] | undefined
        let done = 0
        const batch = t.batch ?? BATCH
        for (;;) {
          let q = src.selectFrom(t.name).selectAll()
          if (after) q = q.where(sql<boolean>`(${sql.join(t.key.map((k) => sql.ref(k)))}) > (${sql.join(after)})`)
          for (const k of t.key) q = q.orderBy(sql.ref(k))
          const rows = (await q.limit(batch).execute()) as Record<string, unknown>[]
          if (rows.length === 0) break
          if (t.omit) for (const r of rows) for (const c of t.omit) delete r[c]
          // Written since findUnstorable() looked: named here too (the transaction then writes nothing).
          if (to.engine.refusesNul) _assertStorable(t, rows)
          await dst.insertInto(t.name).values(rows as never).execute()
          done += rows.length
          progress?.rows(t.name, done, total)
          const last = rows[rows.length - 1]!
          after = t.key.map((k) => last[k])
          if (rows.length < batch) break
        }
      }
    })
    return totals
  })
}
