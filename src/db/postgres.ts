import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import type { Database } from './schema.ts'

// PostgreSQL (CONTRACT §10) through kysely's PostgresDialect and node-postgres. The tables are
// the SQLite ones with the same column types where that keeps one set of repositories for both
// engines: timestamps as ISO text (the API's own format, ordered alike), JSON as text (a
// delivery's payload must stay byte for byte what was signed; jsonb reorders keys), flags as
// 0/1 integers; money and counters are BIGINT and come back as numbers (all far below 2^53).

export { isPostgresUrl, isRetryable, isUniqueViolation, pgCode, redactUrl } from './pg-common.ts'

/** node-postgres turns int8 and numeric into strings by default; every value here fits a number. */
const _types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return (v: string) => (v === null ? null : Number(v))
    return pg.types.getTypeParser(oid, format)
  },
}

export interface PgHandle {
  pool: pg.Pool
  url: string
}

/** A pool and kysely on it. `max` connections per process (each `serve` holds its own pool). */
export function openPostgres(url: string, opts: { max?: number; applicationName?: string } = {}): { db: Kysely<Database>; pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    types: _types as unknown as pg.CustomTypesConfig,
    application_name: opts.applicationName ?? 'travelops',
    connectionTimeoutMillis: 10_000,
  })
  // An idle client that loses its connection (server restart) emits 'error' on the pool; without
  // a listener that would end the process. The next query gets a fresh connection.
  pool.on('error', () => {})
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  return { db, pool }
}

export async function pingPostgres(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db)
}
