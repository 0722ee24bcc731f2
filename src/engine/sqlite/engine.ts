import type { Db, DbInternals } from '../../db/connect.ts'
import { nextCounter } from '../../db/counters.ts'
import { migrate, migrationStatus } from './migrate.ts'
import { earliestDue } from '../../db/queue-gauges.ts'
import { recordUrlOnLock, runningServeUrl } from '../../db/serve-record.ts'
import type { SqliteDatabase } from './sqlite.ts'
import { RateLimiter } from '../../lib/rate-window.ts'
import type { Engine } from '../port.ts'
import { announcingDisabled } from '../feed-wake.ts'
import { startCheckpointer } from './checkpointer.ts'
import { findUnstorableSqlite, snapshotSqlite } from './copy-hooks.ts'
import { sqliteDeliveryStore } from './delivery-store.ts'
import { dropQueue } from './drop-queue.ts'
import { groupCommit } from './group-commit.ts'
import { sqliteEventFeed } from './event-feed.ts'
import { writeEventSqlite } from './outbox.ts'
import { countQueued } from './queue-count.ts'

/**
 * The SQLite adapter of the engine port (engine/port.ts): one file, one connection, one `serve`
 * (process-lock.ts). One writer at a time, so transactions are grouped per event-loop turn
 * and nothing needs a lock beyond BEGIN IMMEDIATE; rate windows live in this process's memory;
 * WAL checkpoints run beside the event loop.
 */
export function sqliteEngine(o: { db: Db; sqlite: SqliteDatabase; internals: DbInternals; file: string; close(): Promise<void> }): Engine {
  const { db, sqlite, internals } = o
  const feed = sqliteEventFeed(db)
  return {
    name: 'sqlite',
    shown: o.file,
    db,
    withTx: groupCommit(db, internals),
    // Inside the caller's transaction: one writer, so the numbers have no gaps.
    nextCounter,
    writeEvent: writeEventSqlite,
    feed,
    deliveryStore: (health) => announcingDisabled(sqliteDeliveryStore(db, health), feed),
    dropQueue: (tenantId, webhookId, stopped) => dropQueue(db, tenantId, webhookId, stopped),
    countQueued: (slice) => countQueued(db, slice),
    earliestDue: (chunk) => earliestDue(db, chunk),
    // One writer: nothing changes a row between this read and the step's deletes.
    lockedForPrune: (q) => q,
    // The connection's data_version and its own writes to api_keys (db/connect.ts sqliteKysely()): ≈4 µs, no kysely.
    keysVersion: () => internals.keysVersion(),
    // TEMP triggers count the write (db/connect.ts).
    keysWrite: (d, fn) => fn(d),
    // One writer at a time, every read-check-write inside one: no race reaches the database.
    conflictOf: () => undefined,
    rerunOnConflict: (run) => run(),
    // On the connection at once, not in the serialising driver's queue: a liveness check must not
    // wait behind every request queued there (a statement runs whole in one turn, so nothing is
    // interrupted; inside another caller's open transaction a SELECT changes nothing).
    ping: async () => void internals.prepare('SELECT 1').get(),
    rateLimiter: () => new RateLimiter(),
    pruneRateWindows: async () => {},
    recordServeUrl: (serveId, url) => recordUrlOnLock(db, serveId, url),
    // One serve per file, on this host: a row of another host is no serve of this file.
    runningServeUrl: () => runningServeUrl(db, false),
    migrate: async (observer) => migrate(sqlite, undefined, observer),
    migrationStatus: async () => migrationStatus(sqlite),
    startBackground: (logger) => startCheckpointer({ file: o.file, db: sqlite, logger }),
    snapshot: (fn) => snapshotSqlite(db, fn),
    findUnstorable: () => findUnstorableSqlite(db),
    refusesNul: false,
    close: o.close,
  }
}
