import type { SelectQueryBuilder } from 'kysely'
import type { Db, SqliteDatabase } from '../db/connect.ts'
import type { UnstorableRow } from './unstorable.ts'
import type { MigrateObserver, MigrationStatus } from '../db/migration-files.ts'
import type { Database } from '../db/schema.ts'
import type { Tx, TxScope } from '../db/tx.ts'
import type { OutboxEvent, Written } from '../delivery/fan-out.ts'
import type { DeliveryStore, HealthPolicy, Lease } from '../delivery/port.ts'
import type { Limiter } from '../lib/rate-window.ts'
import type { Logger } from '../lib/logger.ts'

/**
 * The database engine: everything that differs between SQLite and PostgreSQL, behind one object
 * that `openDatabase()` (engine/open.ts) builds with the adapter of the database `--db` names
 * (engine/sqlite/, engine/postgres/) and that AppDeps carries. Code outside src/engine/ calls
 * it and never asks which database it runs on (test/unit/engine-branches.test.ts).
 */
export interface Engine {
  /** Which database, for log lines and messages only: nothing branches on it. */
  readonly name: 'sqlite' | 'postgres'
  /** `--db` as messages and logs may show it (a URL's password hidden). */
  readonly shown: string
  /** kysely on the database: the API's connection or pool. */
  readonly db: Db

  /**
   * One write transaction; hooks registered inside run once it has committed (db/tx.ts has the
   * rules `fn` follows). SQLite: group commit, BEGIN IMMEDIATE. PostgreSQL: SERIALIZABLE, run
   * again on a serialization failure.
   */
  withTx<T>(fn: (scope: TxScope) => Promise<T>): Promise<T>
  /** The next value of a per-tenant sequence (order and invoice numbers), for the transaction `tx` (db/counters.ts). */
  nextCounter(tx: Tx, tenantId: string, name: string): Promise<number>

  /** The outbox writer: an event and one delivery per subscription that wants it, in the caller's transaction (delivery/fan-out.ts). */
  writeEvent(tx: Tx, event: OutboxEvent, lease?: Lease | null): Promise<Written>
  /** The events in the order they committed, and word of new ones (GET /v1/events/stream). */
  readonly feed: EventFeed
  /** The delivery worker's store (delivery/port.ts), with the endpoint-health policy of this serve. */
  deliveryStore(health?: HealthPolicy): DeliveryStore
  /** Drops the queue of a subscription no longer active, in bounded statements (db/drop-queue.ts). */
  dropQueue(tenantId: string, webhookId: string, stopped?: () => boolean): Promise<void>
  /** How many deliveries are queued (`/metrics`), in bounded steps where the count would hold the database. */
  countQueued(slice?: number): Promise<number>
  /** The earliest due time of any queued delivery, or null (`/metrics`). */
  earliestDue(chunk?: number): Promise<string | null>

  /**
   * Retention: the read of the rows a prune step deletes, locked against the writers beside it
   * and skipping those they hold (PostgreSQL); as it is where one writer runs at a time (SQLite).
   */
  lockedForPrune<O>(q: SelectQueryBuilder<Database, 'deliveries', O>): SelectQueryBuilder<Database, 'deliveries', O>

  /**
   * A value that changes whenever API keys may have changed (this process's or another's
   * writes); the key cache (http/auth.ts) is trusted while it stays the same. null: nothing may
   * be cached.
   */
  keysVersion(): string | null
  /** A write to api_keys (other than a `last_used_at` touch), announced to every process's key cache. `db` may be a transaction. */
  keysWrite<T>(db: Db, fn: (db: Db) => Promise<T>): Promise<T>

  /**
   * What a database error says of a race between writers, for a 409 instead of a 500: `unique`,
   * two writers reached the same unique key; `concurrent`, a transaction kept losing to others
   * (withTx() gave up running it again). undefined: any other error.
   */
  conflictOf(err: unknown): 'unique' | 'concurrent' | undefined
  /**
   * Runs `run`, one statement outside any transaction, and runs it again while the database ends
   * it as the loser of a race that running it again resolves (PostgreSQL: a deadlock's victim,
   * when the statement takes its rows in another order than a writer beside it; at most 5 tries).
   * Once where one writer runs at a time (SQLite). `run` must leave nothing behind when it fails.
   */
  rerunOnConflict<T>(run: () => Promise<T>): Promise<T>

  /** The database answers (GET /health), without queueing behind the requests' queries. */
  ping(): Promise<void>
  /** The API keys' hourly windows: in memory for one process, or shared by every process in the database. */
  rateLimiter(): Limiter & { close(): Promise<void> }
  /** Removes rate windows of past hours that the database keeps (none where they live in memory). */
  pruneRateWindows(nowMs: number): Promise<void>

  /** Records where this serve listens (`dashboard link`); the function returned forgets it when serve stops. */
  recordServeUrl(serveId: string, url: string, now: Date): Promise<() => Promise<void>>
  /** The address of the newest running serve of this database, or undefined. */
  runningServeUrl(): Promise<string | undefined>

  /** Applies pending migrations; the names applied. */
  migrate(observer?: MigrateObserver): Promise<string[]>
  /** Every migration and whether it is applied. */
  migrationStatus(): Promise<MigrationStatus[]>

  /**
   * Background work serve runs beside the engine (SQLite's WAL checkpoints), and `room()`, which
   * bulk deletes wait on so that they never outrun it.
   */
  startBackground(logger: Logger): { room?: () => Promise<void>; stop(): Promise<void> }

  /** `db copy`: runs `fn` with every read seeing one snapshot of this (source) database. */
  snapshot<T>(fn: (db: Db) => Promise<T>): Promise<T>
  /** `db copy`: the first row of this (source) database that PostgreSQL could not store, if any. */
  findUnstorable(): Promise<UnstorableRow | undefined>
  /** `db copy`: whether this (target) database refuses U+0000 in text. */
  readonly refusesNul: boolean

  close(): Promise<void>
}

/**
 * The event feed (CONTRACT §15's stream): the events of some tenants in an order no later commit
 * can go back before, read from a position, and wake-ups when new ones may have committed. A
 * position is an opaque string; positions compare as strings, in feed order.
 */
export interface EventFeed {
  /** Now: every event committed before the call is at or before it, every one committed later after it. */
  head(): Promise<string>
  /**
   * The position after which a stream resumes that has seen the tenant's event `id`: that
   * event's own; for an id no longer kept (pruned), before the first kept event made after it.
   */
  resumeAfter(tenantId: string, id: string): Promise<string>
  /** Up to `limit` committed events of these tenants after `position`, in feed order. */
  after(tenantIds: readonly string[], position: string, limit: number): Promise<FeedEvent[]>
  /**
   * Calls `wake` whenever events may have committed: at once for this process's (committed()),
   * soon for other processes' (PostgreSQL: LISTEN). The function returned stops it.
   */
  watch(wake: () => void): Promise<() => Promise<void>>
  /** This process committed events: its own watchers are woken, and other processes told (PostgreSQL: a NOTIFY at most every 100 ms). */
  committed(): void
}

/** An event as the feed reads it: where it stands, and its row (`payload`: the envelope's exact bytes). */
export interface FeedEvent {
  position: string
  id: string
  tenantId: string
  name: string
  payload: string
}

/** A database opened by openDatabase() (open.ts). */
export interface OpenDb {
  db: Db
  /** The database's engine: everything that differs between SQLite and PostgreSQL. */
  engine: Engine
  /** The SQLite connection (SQLite only). */
  sqlite?: SqliteDatabase
  close(): Promise<void>
}

/** A SQLite database opened by openDb() (sqlite/open.ts): its connection is at hand. */
export interface OpenSqliteDb extends OpenDb {
  sqlite: SqliteDatabase
}
