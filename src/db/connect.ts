import {
  CompiledQuery, Kysely, SqliteDialect,
  type DatabaseConnection, type Driver, type SqliteDatabase as KyselySqlite, type SqliteStatement,
} from 'kysely'
import type { Database } from './schema.ts'
import { openSqlite, type SqliteDatabase } from './sqlite.ts'
import { migrate } from './migrate.ts'

export type Db = Kysely<Database>

export interface OpenDb {
  db: Db
  sqlite: SqliteDatabase
  close(): Promise<void>
}

/**
 * Opens the database file, applies pending migrations and returns kysely on top of it.
 * kysely's SQLite driver prepares every statement anew (≈31 µs against ≈3.5 µs for a
 * cached one), so it is handed a database whose prepare() caches statements by SQL text.
 */
export function openDb(file: string, opts: { migrate?: boolean } = {}): OpenDb {
  const sqlite = openSqlite(file)
  if (opts.migrate !== false) migrate(sqlite)
  const db = new Kysely<Database>({ dialect: new _SerialSqliteDialect({ database: _cachingDatabase(sqlite) }) })
  return { db, sqlite, close: () => db.destroy() }
}

function _cachingDatabase(sqlite: SqliteDatabase): KyselySqlite {
  const cache = new Map<string, SqliteStatement>()
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      let stmt = cache.get(sql)
      if (!stmt) {
        stmt = sqlite.prepare(sql) as unknown as SqliteStatement
        if (cache.size > 2000) cache.clear() // dynamic SQL (e.g. IN lists) must not grow it forever
        cache.set(sql, stmt)
      }
      return stmt
    },
  }
}

/**
 * kysely 0.29's SQLite driver hands the one connection to every caller at once, so an
 * `await` inside one request's transaction could let another request's query run inside
 * it. This driver serialises connection use (a transaction holds it until commit) and
 * starts transactions with BEGIN IMMEDIATE so a CLI process writing to the same file
 * waits on busy_timeout instead of failing on a lock upgrade.
 */
class _SerialSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    return new _SerialDriver(super.createDriver())
  }
}

class _SerialDriver implements Driver {
  #inner: Driver
  #busy = false
  #waiters: (() => void)[] = []

  constructor(inner: Driver) {
    this.#inner = inner
  }

  init() { return this.#inner.init() }
  destroy() { return this.#inner.destroy() }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#busy) await new Promise<void>((resolve) => this.#waiters.push(resolve))
    this.#busy = true
    return this.#inner.acquireConnection()
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await this.#inner.releaseConnection(connection)
    const next = this.#waiters.shift()
    if (next) next()
    else this.#busy = false
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
  }
  commitTransaction(connection: DatabaseConnection) { return this.#inner.commitTransaction(connection) }
  rollbackTransaction(connection: DatabaseConnection) { return this.#inner.rollbackTransaction(connection) }
}
