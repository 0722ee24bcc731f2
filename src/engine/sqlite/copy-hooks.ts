import { sql } from 'kysely'
import type { Db } from '../../db/connect.ts'
import { COPIED_TABLES } from '../copy.ts'
import { UnstorableRow } from '../unstorable.ts'

// `db copy`'s hooks for a SQLite source (engine/copy.ts).

/**
 * The first row of a SQLite database with a U+0000 in any column (PostgreSQL refuses such text;
 * a SQLite file can hold it, written before the API refused it, or by hand), read in one
 * snapshot before the target is touched. One scan a table, the bytes compared as a BLOB (SQLite's
 * text functions are undefined past a NUL). (A PostgreSQL source holds none.)
 */
export async function findUnstorableSqlite(db: Db): Promise<UnstorableRow | undefined> {
  return snapshotSqlite(db, async (src) => {
    for (const t of COPIED_TABLES) {
      const columns = (await sql<{ name: string }>`select name from pragma_table_info(${t.name})`.execute(src)).rows.map((c) => c.name)
      const hasNul = sql.join(columns.map((c) => sql`instr(cast(${sql.ref(c)} as blob), x'00') > 0`), sql` or `)
      const row = (await sql<Record<string, unknown>>`select * from ${sql.table(t.name)} where ${hasNul} limit 1`.execute(src)).rows[0]
      if (!row) continue
      const column = columns.find((c) => _hasNul(row[c]))!
      return new UnstorableRow(t.name, t.key.length === 1 ? String(row[t.key[0]!]) : t.key.map((k) => `${k}=${String(row[k])}`).join(', '), column)
    }
    return undefined
  })
}

/** `db copy`'s snapshot of a SQLite source: a deferred read transaction on the connection (WAL: writers go on). */
export function snapshotSqlite<T>(db: Db, fn: (db: Db) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`begin`.execute(conn)
    try {
      return await fn(conn as unknown as Db)
    } finally {
      await sql`commit`.execute(conn)
    }
  })
}

const _hasNul = (value: unknown): boolean => (typeof value === 'string' ? value.includes('\0') : value instanceof Uint8Array && value.includes(0))
