import {
  CompiledQuery, Kysely, SqliteDialect, sql, type Transaction,
  type DatabaseConnection, type Driver, type SqliteDatabase as KyselySqlite, type SqliteStatement,
} from 'kysely'
import type { Database } from './schema.ts'
import { openSqlite, type SqliteDatabase } from './sqlite.ts'
import { migrate, type MigrateObserver } from './migrate.ts'
import type { Engine } from './migration-files.ts'
import { isPostgresUrl, KEYS_CHANNEL } from './pg-common.ts'
import type { KeysWatch } from '../engine/postgres/keys-watch.ts'

export type Db = Kysely<Database>

export interface OpenDb {
  db: Db
  engine: Engine
  /** The SQLite connection (SQLite only). */
  sqlite?: SqliteDatabase
  close(): Promise<void>
}

/** A SQLite database opened by openDb(): its connection is at hand. */
export interface OpenSqliteDb extends OpenDb {
  sqlite: SqliteDatabase
}

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
 * Opens the database `--db` names, SQLite file or `postgres://` URL, after looking at it
 * without writing (CONTRACT §10, opening safely: throws DatabaseRefused). SQLite loads no
 * PostgreSQL code and the other way round.
 */
export async function openDatabase(target: string, opts: OpenOptions = {}): Promise<OpenDb> {
  const { assertUsable, inspectSqlite } = await import('./inspect.ts')
  if (!isPostgresUrl(target)) {
    assertUsable(inspectSqlite(target), target, { create: opts.create ?? false, allowPending: opts.allowPending })
    const opened = openDb(target, { migrate: false })
    if (opts.migrate) migrate(opened.sqlite, undefined, opts.observer)
    return opened
  }
  const [{ openPostgres, redactUrl }, { inspectPostgres, migratePostgres }, { DatabaseRefused }, { KeysWatch }] = await Promise.all([
    import('../engine/postgres/pool.ts'), import('../engine/postgres/migrate.ts'), import('./inspect.ts'), import('../engine/postgres/keys-watch.ts'),
  ])
  const { db, pool } = openPostgres(target)
  const health = openPostgres(target, { max: 1, applicationName: 'travelops health' })
  _pings.set(db, () => health.pool.query('select 1'))
  // Statements that must commit on their own while a transaction of the main pool is open
  // (counters.ts) take a connection from here: from the main pool they could wait for a
  // connection held by a transaction that waits for them.
  const side = openPostgres(target, { max: 2, applicationName: 'travelops counters' })
  _sides.set(db, side.db)
  const delivery = openPostgres(target, { max: 4, applicationName: 'travelops delivery', options: DELIVERY_PLANNER })
  _deliveries.set(db, delivery.db)
  const keys = new KeysWatch(target)
  _pgKeys.set(db, keys)
  const where = redactUrl(target)
  try {
    let state
    try {
      state = await inspectPostgres(db)
    } catch (err) {
      throw new DatabaseRefused(`cannot open ${where}: ${(err as Error).message}`)
    }
    assertUsable(state, where, { create: opts.create ?? false, allowPending: opts.allowPending })
    if (opts.migrate) await migratePostgres(db, undefined, opts.observer)
  } catch (err) {
    await Promise.all([db.destroy(), health.pool.end(), side.pool.end(), delivery.db.destroy(), keys.close()])
    throw err
  }
  void pool // kysely's destroy() ends the pool
  return { db, engine: 'postgres', close: async () => void (await Promise.all([db.destroy(), health.pool.end(), side.pool.end(), delivery.db.destroy(), keys.close()])) }
}

/**
 * Opens the database file, applies pending migrations and returns kysely on top of it.
 * kysely's SQLite driver prepares every statement anew (≈31 µs against ≈3.5 µs for a
 * cached one), so it is handed a database whose prepare() caches statements by SQL text.
 */
export function openDb(file: string, opts: { migrate?: boolean } = {}): OpenSqliteDb {
  const sqlite = openSqlite(file)
  if (opts.migrate !== false) migrate(sqlite)
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
  _internals.set(db, {
    sqlite,
    prepare: (sql) => database.prepare(sql) as unknown as SqliteStatementOf,
    lock: () => dialect.driver!.lock(),
    unlock: () => dialect.driver!.unlock(),
    keysVersion: () => {
      if (!watching) watchKeys()
      return watching ? `${dataVersion.get() as number}.${keyWrites}` : `${dataVersion.get() as number}.changes.${ownChanges.get() as number}`
    },
  })
  // kysely closes the file only if it ever ran a query itself (compiled() may have bypassed it).
  const close = async () => {
    await db.destroy()
    if (sqlite.open) sqlite.close()
  }
  return { db, engine: 'sqlite', sqlite, close }
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

const _internals = new WeakMap<Db, DbInternals>()
const _txOf = new WeakMap<Transaction<Database>, DbInternals>()
const _baseOf = new WeakMap<Transaction<Database>, Db>()

/** @internal for src/db/ only. */
export function internalsOf(db: Db): DbInternals | undefined {
  return _internals.get(db)
}

/** @internal withTx() says which database a transaction is on (see compiled()). */
export function registerTx(tx: Transaction<Database>, db: Db): void {
  _baseOf.set(tx, db)
  const x = _internals.get(db)
  if (x) _txOf.set(tx, x)
}


/** @internal The database of a transaction that withTx() opened (its connection is the one held). */
export function internalsOfTx(tx: Transaction<Database>): DbInternals | undefined {
  return _txOf.get(tx)
}

/**
 * A value that changes whenever API keys may have changed: another connection (a CLI process)
 * committed anything (`PRAGMA data_version`), or this connection wrote to api_keys (TEMP
 * triggers count every insert, delete and update but a `last_used_at` touch — rolled-back
 * writes too, so it errs on the side of "changed"). A cache of key rows can be trusted while
 * this stays the same; this process's orders, events and deliveries no longer empty it (they
 * did while it was `total_changes()`). Costs ≈4 µs, no kysely. null for a Db not opened by
 * openDb: then nothing may be cached.
 */
export function keysVersion(db: Db): string | null {
  const x = _internals.get(db)
  return x ? x.keysVersion() : (_pgKeys.get(db)?.version() ?? null)
}

/** Whether `db` (or the database of transaction `db`) is a PostgreSQL database opened by openDatabase(). */
export function isPostgres(db: Db | Transaction<Database>): boolean {
  const base = db.isTransaction ? _baseOf.get(db as Transaction<Database>) : db as Db
  return base !== undefined && _pgKeys.has(base)
}

/** PostgreSQL: each database's watch on key writes (db/pg-keys-watch.ts). */
const _pgKeys = new WeakMap<Db, KeysWatch>()

/**
 * A write to api_keys (other than a `last_used_at` touch). On SQLite as it is (the TEMP triggers
 * count it). On PostgreSQL in a transaction that also announces it (NOTIFY, delivered to every
 * listening process when it commits), and counted by this process's key cache once committed.
 */
export async function keysWrite<T>(db: Db, fn: (db: Db) => Promise<T>): Promise<T> {
  if (_internals.has(db) || (db.isTransaction && _txOf.has(db as Transaction<Database>))) return fn(db)
  const announce = (d: Db) => sql`select pg_notify(${KEYS_CHANNEL}, '')`.execute(d)
  const base = db.isTransaction ? _baseOf.get(db as Transaction<Database>) ?? db : db
  const result = db.isTransaction
    ? await fn(db).then(async (r) => (await announce(db), r))
    : await db.transaction().execute(async (tx) => {
      const r = await fn(tx)
      await announce(tx)
      return r
    })
  _pgKeys.get(base)?.changed()
  return result
}

/**
 * The database answers a query. On SQLite this runs on the connection at once, not in the
 * serialising driver's queue: a liveness check must not wait behind every request queued there
 * (a statement runs whole in one turn, so nothing is interrupted; inside another caller's open
 * transaction a SELECT changes nothing).
 */
export async function pingDb(db: Db): Promise<void> {
  const x = _internals.get(db)
  if (x) x.prepare('SELECT 1').get()
  else await (_pings.get(db) ?? (() => sql`select 1`.execute(db)))()
}

/** PostgreSQL: a connection of its own for pingDb(), so /health never queues behind the pool's requests. */
const _pings = new WeakMap<Db, () => Promise<unknown>>()
const _sides = new WeakMap<Db, Db>()
const _deliveries = new WeakMap<Db, Db>()

/**
 * How the delivery engine's connections plan: never a bitmap or a sequential scan. Every
 * statement of the PostgreSQL delivery store (db/pg-delivery-store.ts) finds its rows through an
 * index by construction (a subscription's due deliveries in due order, a batch of ids), and a
 * LIMIT stops an index scan after the rows it needs; a bitmap scan reads every matching index
 * entry first and a sequential scan the whole table. Which one the planner takes follows the
 * statistics: with a backlog that the last ANALYZE did not see (a burst of writes, a receiver
 * down for an hour) it took the bitmap scan, and each read of the queue and each claim cost
 * the size of the backlog (7–15 ms at 40 k queued, up to ~150 times a second) instead of
 * the size of the batch. These settings keep the index paths whatever the statistics say.
 */
export const DELIVERY_PLANNER = '-c enable_bitmapscan=off -c enable_seqscan=off'

/**
 * @internal PostgreSQL: the pool the delivery store runs on (DELIVERY_PLANNER's settings; apart
 * from the API's pool, so neither waits for the other's connections). SQLite: the database itself.
 */
export function deliveryDbOf(db: Db): Db {
  return _deliveries.get(db) ?? db
}

/**
 * @internal A database to run a statement that commits on its own while `tx` stays open: on
 * PostgreSQL a small pool of its own (never the pool `tx`'s connection came from), on SQLite none.
 */
export function outsideOfTx(tx: Transaction<Database>): Db | undefined {
  const base = _baseOf.get(tx)
  return base ? _sides.get(base) : undefined
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
