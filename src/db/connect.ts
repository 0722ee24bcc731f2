import {
  CompiledQuery, Kysely, SqliteDialect, type Transaction,
  type DatabaseConnection, type Driver, type SqliteDatabase as KyselySqlite, type SqliteStatement,
} from 'kysely'
import type { Database } from './schema.ts'
import type BetterSqlite from 'better-sqlite3'
import type { MigrateObserver } from './migration-files.ts'

export type Db = Kysely<Database>

/** SQLite's connection (engine/sqlite/sqlite.ts opens it), on which the statement cache below runs. */
export type SqliteDatabase = BetterSqlite.Database

export interface OpenOptions {
  /** serve and migrate: a missing or empty database may be created. */
  create?: boolean
  /** Apply pending migrations (serve, migrate). */
  migrate?: boolean
  /** A database with pending migrations is fine (migrate --status, backup). */
  allowPending?: boolean
  observer?: MigrateObserver
}

/**
 * kysely on a SQLite connection (engine/sqlite/open.ts opens the file and builds the engine).
 * kysely's SQLite driver prepares every statement anew (≈31 µs against ≈3.5 µs for a
 * cached one), so it is handed a database whose prepare() caches statements by SQL text.
 */
export function sqliteKysely(sqlite: SqliteDatabase): { db: Db; internals: DbInternals; close(): Promise<void> } {
  const database = _cachingDatabase(sqlite)
  const dialect = new _SerialSqliteDialect({ database })
  const db = new Kysely<Database>({ dialect })
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck()
  const ownChanges = sqlite.prepare('SELECT total_changes()').pluck()
  // This connection's writes to api_keys, counted by TEMP triggers (they fire for this
  // connection only; other processes' commits show in data_version). Created on first use: a
  // file opened before its migrations has no api_keys table yet, and then every write counts.
  let keyWrites = 0
  let watching = false
  const watchKeys = () => {
    try {
      sqlite.function('travelops_key_written', () => { keyWrites++; return null })
      for (const [name, on] of [['insert', 'INSERT'], ['delete', 'DELETE'], ['update', 'UPDATE OF id, tenant_id, key_hash, scopes, rate_limit, expires_at, revoked_at']]) {
        sqlite.exec(`CREATE TEMP TRIGGER IF NOT EXISTS travelops_keys_${name} AFTER ${on} ON main.api_keys BEGIN SELECT travelops_key_written(); END`)
      }
      watching = true
    } catch { /* not migrated yet */ }
  }
  const internals: DbInternals = {
    sqlite,
    prepare: (sql) => database.prepare(sql) as unknown as SqliteStatementOf,
    lock: () => dialect.driver!.lock(),
    unlock: () => dialect.driver!.unlock(),
    keysVersion: () => {
      if (!watching) watchKeys()
      return watching ? `${dataVersion.get() as number}.${keyWrites}` : `${dataVersion.get() as number}.changes.${ownChanges.get() as number}`
    },
  }
  _internals.set(db, internals)
  // kysely closes the file only if it ever ran a query itself (compiled() may have bypassed it).
  const close = async () => {
    await db.destroy()
    if (sqlite.open) sqlite.close()
  }
  return { db, internals, close }
}

interface SqliteStatementOf {
  /** true when the statement returns rows */
  reader: boolean
  all(...params: unknown[]): unknown[]
  get(...params: unknown[]): unknown
  run(...params: unknown[]): { changes: number }
}

/** What src/db/ itself needs of an open database beyond kysely (see exclusive.ts). */
export interface DbInternals {
  sqlite: SqliteDatabase
  /** The statement cache kysely uses too. */
  prepare(sql: string): SqliteStatementOf
  /** The serialising driver's turn: while held, no kysely query or transaction runs. */
  lock(): Promise<void>
  unlock(): void
  keysVersion(): string
}

// The SQLite connection's statement cache, found from kysely (compiled(), exclusive()): on the
// database, and on each transaction group commit opens on it.
const _internals = new WeakMap<Db, DbInternals>()
const _txOf = new WeakMap<Transaction<Database>, DbInternals>()

/** @internal for src/db/ only. */
export function internalsOf(db: Db): DbInternals | undefined {
  return _internals.get(db)
}

/** @internal SQLite's group commit says which connection a transaction holds (see compiled()). */
export function registerTx(tx: Transaction<Database>, db: Db): void {
  const x = _internals.get(db)
  if (x) _txOf.set(tx, x)
}


/** @internal The database of a transaction that withTx() opened (its connection is the one held). */
export function internalsOfTx(tx: Transaction<Database>): DbInternals | undefined {
  return _txOf.get(tx)
}

function _cachingDatabase(sqlite: SqliteDatabase): KyselySqlite {
  const cache = new Map<string, SqliteStatement>()
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      let stmt = cache.get(sql)
      if (!stmt) {
        stmt = sqlite.prepare(plainParameters(sql)) as unknown as SqliteStatement
        if (cache.size > 2000) cache.clear() // dynamic SQL (e.g. IN lists) must not grow it forever
        cache.set(sql, stmt)
      }
      return stmt
    },
  }
}

/**
 * Every `?` placeholder becomes `+?` (unary plus: the same value, type, affinity and
 * collation, and still usable for an index). SQLite (3.54, as better-sqlite3 13 builds it)
 * marks a statement for re-preparation whenever a new value is bound to a bare `?` that the
 * planner looked at (e.g. `tenant_id = ? ORDER BY id`, `LIMIT ?`): a cached statement was then
 * compiled again on every run, 10–40 µs each (GET /v1/orders: 54 µs → 35 µs for the query).
 * The plans are the same. Quoted text, identifiers and comments are left alone. (The one
 * optimisation a bare `?` allows that `+?` does not, LIKE with a bound prefix, is not used.)
 */
export function plainParameters(sql: string): string {
  let out = ''
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!
    if (c === "'" || c === '"' || c === '`') {
      const end = _closing(sql, i, c)
      out += sql.slice(i, end)
      i = end - 1
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i)
      out += sql.slice(i, end < 0 ? sql.length : end)
      i = (end < 0 ? sql.length : end) - 1
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2)
      out += sql.slice(i, end < 0 ? sql.length : end + 2)
      i = (end < 0 ? sql.length : end + 2) - 1
    } else if (c === '?' && !/[0-9]/.test(sql[i + 1] ?? '') && out[out.length - 1] !== '+') {
      out += '+?'
    } else out += c
  }
  return out
}

/** Index just past the quote closing the one at `start` (a doubled quote is part of the text). */
function _closing(sql: string, start: number, quote: string): number {
  for (let i = start + 1; i < sql.length; i++) {
    if (sql[i] !== quote) continue
    if (sql[i + 1] === quote) i++
    else return i + 1
  }
  return sql.length
}

/**
 * kysely 0.29's SQLite driver hands the one connection to every caller at once, so an
 * `await` inside one request's transaction could let another request's query run inside
 * it. This driver serialises connection use (a transaction holds it until commit) and
 * starts transactions with BEGIN IMMEDIATE so a CLI process writing to the same file
 * waits on busy_timeout instead of failing on a lock upgrade.
 */
class _SerialSqliteDialect extends SqliteDialect {
  driver: _SerialDriver | undefined

  override createDriver(): Driver {
    return (this.driver = new _SerialDriver(super.createDriver()))
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

  async lock(): Promise<void> {
    if (this.#busy) await new Promise<void>((resolve) => this.#waiters.push(resolve))
    this.#busy = true
  }

  unlock(): void {
    const next = this.#waiters.shift()
    if (next) next()
    else this.#busy = false
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.lock()
    return this.#inner.acquireConnection()
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await this.#inner.releaseConnection(connection)
    this.unlock()
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
  }
  commitTransaction(connection: DatabaseConnection) { return this.#inner.commitTransaction(connection) }
  rollbackTransaction(connection: DatabaseConnection) { return this.#inner.rollbackTransaction(connection) }
}
