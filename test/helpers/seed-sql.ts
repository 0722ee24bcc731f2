import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely'

// Many rows at once, written by the database itself (a recursive CTE on SQLite, generate_series
// on PostgreSQL), for tests that need more records than the API could make in a test's time.

/** Rows 1…n of a series as a FROM item `s(i)`, for the engine of `db`. */
export function series(db: Kysely<any>, n: number): RawBuilder<unknown> {
  return _onPostgres(db) ? sql`generate_series(1, ${n}::int) AS s(i)` : sql`(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${n}) SELECT i FROM s) AS s`
}

/** The i-th id of the prefix older than every real one (a UUIDv7 of time 0), as SQL over the series' `i`. */
export function oldIdSql(db: Kysely<any>, prefix: string): RawBuilder<string> {
  const stem = `${prefix}_00000000-0000-7000-8000-`
  return _onPostgres(db) ? sql`${stem} || lpad(to_hex(i), 12, '0')` : sql`${stem} || printf('%012x', i)`
}

/** Whether kysely speaks PostgreSQL's dialect to `db` (a transaction's too). */
const _onPostgres = (db: Kysely<any>) => db.getExecutor().adapter instanceof PostgresAdapter

/** The id oldIdSql() gives row i. */
export const oldId = (prefix: string, i: number): string => `${prefix}_00000000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`
