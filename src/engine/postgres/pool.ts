import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { isStalePlan } from './common.ts'
import type { Database } from '../../db/schema.ts'

// PostgreSQL (CONTRACT §10) through kysely's PostgresDialect and node-postgres. The tables are
// the SQLite ones with the same column types where that keeps one set of repositories for both
// engines: timestamps as ISO text (the API's own format, ordered alike), JSON as text (a
// delivery's payload must stay byte for byte what was signed; jsonb reorders keys), flags as
// 0/1 integers; money and counters are BIGINT and come back as numbers (all far below 2^53).

export { isPostgresUrl, isRetryable, isStalePlan, isUniqueViolation, pgCode, redactUrl } from './common.ts'

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
export function openPostgres(url: string, opts: { max?: number; applicationName?: string; options?: string } = {}): { db: Kysely<Database>; pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    types: _types as unknown as pg.CustomTypesConfig,
    application_name: opts.applicationName ?? 'travelops',
    connectionTimeoutMillis: 10_000,
    // Settings of every connection of this pool (`-c name=value …`), as the server takes them at connect.
    ...(opts.options ? { options: opts.options } : {}),
  })
  // An idle client that loses its connection (server restart) emits 'error' on the pool; without
  // a listener that would end the process. The next query gets a fresh connection.
  pool.on('error', () => {})
  const prepare = process.env.TRAVELOPS_PG_PREPARE !== '0'
  pool.on('connect', (client) => _wrapQueries(client, prepare))
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  return { db, pool }
}

/** Named (prepared) statements one connection keeps; statements past them are sent unnamed. */
export const PREPARED_PER_CONNECTION = 256
const _TX_START = /^\s*(begin|start transaction)\b/i
const _TX_END = /^\s*(commit|rollback|end|abort)\s*;?\s*$/i

/**
 * Every statement with parameters is sent as a named statement, prepared the first time this
 * connection sends its text: PostgreSQL then parses it once per connection, and after five runs
 * plans it once too if its generic plan costs no more than the custom ones (its default
 * `plan_cache_mode`). The engine's statements are the same few texts over and over; unnamed,
 * each was parsed and planned again at every run, which on this machine's two shared cores was
 * a sixth of a POST's throughput and a quarter of the sustained write rate. Statements without parameters
 * (transaction control, migrations) go as before. `TRAVELOPS_PG_PREPARE=0` turns this off
 * (behind a pooler in transaction mode that does not track prepared statements, e.g. PgBouncer
 * before 1.21). Either way every query goes with a callback of ours (_viaCallback), not
 * node-postgres's promise.
 *
 * A statement prepared before a migration changed a table it reads with `*` fails once with
 * "cached plan must not change result type" (a process still running while a newer one
 * upgrades the schema): its name is dropped, and the statement runs again under a new one at
 * once outside a transaction; inside one the error goes up and withTx() runs the transaction
 * again (isStalePlan).
 */
function _wrapQueries(client: pg.PoolClient, prepare: boolean): void {
  const names = new Map<string, string>()
  let next = 0
  let inTx = false
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<pg.QueryResult>
  const named = async (text: string, values: unknown[], retried = false): Promise<pg.QueryResult> => {
    let name = names.get(text)
    if (name === undefined) {
      if (names.size >= PREPARED_PER_CONNECTION) return _viaCallback(query, { text, values })
      names.set(text, (name = `travelops_${next++}`))
    }
    try {
      return await _viaCallback(query, { name, text, values })
    } catch (err) {
      if (!isStalePlan(err)) throw err
      names.delete(text)
      if (inTx || retried) throw err
      return named(text, values, true)
    }
  }
  ;(client as unknown as { query: unknown }).query = (text: unknown, values?: unknown, callback?: unknown) => {
    // A callback, or a submittable (a cursor: node-postgres returns it, not a promise), as given.
    if (callback !== undefined || typeof values === 'function' || typeof (text as { submit?: unknown })?.submit === 'function') return query(text, values, callback)
    if (typeof text !== 'string') return _viaCallback(query, text as object, values)
    if (prepare && Array.isArray(values) && values.length > 0) return named(text, values)
    if (_TX_START.test(text)) inTx = true
    else if (_TX_END.test(text)) inTx = false
    return _viaCallback(query, { text, values })
  }
}

/**
 * A query with a callback of ours rather than node-postgres's promise: for that promise
 * node-postgres stores a new closure on each query (`query.callback = (err, res) => …` inside
 * the promise's executor), and with it every request's objects outlived the young
 * generation's collections (~1 kB per read promoted to old space, a full collection every
 * second under load); the same pattern as undici's request() (delivery/send.ts). The callback is made by a function of its own (_settle), which keeps nothing else.
 */
function _viaCallback(query: (...args: unknown[]) => unknown, config: object, values?: unknown): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    if (values === undefined) query(config, _settle(resolve, reject))
    else query(config, values, _settle(resolve, reject))
  })
}

function _settle(resolve: (r: pg.QueryResult) => void, reject: (e: unknown) => void) {
  return (err: unknown, res: pg.QueryResult) => (err ? reject(err) : resolve(res))
}

export async function pingPostgres(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db)
}
