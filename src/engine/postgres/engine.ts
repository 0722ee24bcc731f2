import { sql } from 'kysely'
import type { Db, OpenOptions } from '../../db/connect.ts'
import type { OpenDb } from '../port.ts'
import { nextCounter } from '../../db/counters.ts'
import { assertUsable, DatabaseRefused } from '../../db/inspect.ts'
import { isRetryable, isUniqueViolation, KEYS_CHANNEL, redactUrl, rerunRetryable } from './common.ts'
import { earliestDue } from '../../db/queue-gauges.ts'
import { recordOwnRow, runningServeUrl } from '../../db/serve-record.ts'
import { SharedRateLimiter } from './rate-windows.ts'
import type { Engine } from '../port.ts'
import { announcingDisabled } from '../feed-wake.ts'
import { pgDeliveryStore } from './delivery-store.ts'
import { dropQueue } from './drop-queue.ts'
import { KeysWatch } from './keys-watch.ts'
import { inspectPostgres, migratePostgres, migrationStatusPostgres } from './migrate.ts'
import { pgEventFeed } from './event-feed.ts'
import { writeEventPostgres } from './outbox.ts'
import { openPostgres } from './pool.ts'
import { serializableTx } from './transactions.ts'

/**
 * How the delivery engine's connections plan: never a bitmap or a sequential scan. Every
 * statement of the PostgreSQL delivery store (delivery-store.ts) finds its rows through an
 * index by construction (a subscription's due deliveries in due order, a batch of ids), and a
 * LIMIT stops an index scan after the rows it needs; a bitmap scan reads every matching index
 * entry first and a sequential scan the whole table. Which one the planner takes follows the
 * statistics: with a backlog that the last ANALYZE did not see (a burst of writes, a receiver
 * down for an hour) it took the bitmap scan, and each read of the queue and each claim cost
 * the size of the backlog (7–15 ms at 40 k queued, up to ~150 times a second) instead of
 * the size of the batch. These settings keep the index paths whatever the statistics say.
 */
export const DELIVERY_PLANNER = '-c enable_bitmapscan=off -c enable_seqscan=off'

/** The PostgreSQL engine, with the pool its delivery store runs on (for tests of its plans). */
export interface PostgresEngine extends Engine {
  /** The delivery engine's pool (DELIVERY_PLANNER's settings; apart from the API's pool, so neither waits for the other's connections). */
  readonly deliveryDb: Db
}

/**
 * The PostgreSQL adapter of the engine port (engine/port.ts), for any number of `serve`
 * processes on one database: the API's pool; a connection of its own for ping() (so /health
 * never queues behind the pool's requests); a small pool for statements that must commit on
 * their own while a transaction of the API's pool is open (nextCounter(): from the main pool
 * they could wait for a connection held by a transaction that waits for them); the delivery
 * store's pool; a LISTEN connection for key writes. Opened after looking at the database
 * without writing (CONTRACT §10: throws DatabaseRefused).
 */
export async function openPostgresDatabase(url: string, opts: OpenOptions): Promise<OpenDb & { engine: PostgresEngine }> {
  const { db } = openPostgres(url)
  const health = openPostgres(url, { max: 1, applicationName: 'travelops health' })
  const side = openPostgres(url, { max: 2, applicationName: 'travelops counters' })
  const delivery = openPostgres(url, { max: 4, applicationName: 'travelops delivery', options: DELIVERY_PLANNER })
  const keys = new KeysWatch(url)
  const feed = pgEventFeed(db, url)
  const close = async () => void (await Promise.all([feed.close(), db.destroy(), health.pool.end(), side.pool.end(), delivery.db.destroy(), keys.close()]))
  const shown = redactUrl(url)
  try {
    let state
    try {
      state = await inspectPostgres(db)
    } catch (err) {
      throw new DatabaseRefused(`cannot open ${shown}: ${(err as Error).message}`)
    }
    assertUsable(state, shown, { create: opts.create ?? false, allowPending: opts.allowPending })
    if (opts.migrate) await migratePostgres(db, undefined, opts.observer)
  } catch (err) {
    await close()
    throw err
  }
  const announceKeys = (d: Db) => sql`select pg_notify(${KEYS_CHANNEL}, '')`.execute(d)
  const engine: PostgresEngine = {
    name: 'postgres',
    shown,
    db,
    deliveryDb: delivery.db,
    withTx: (fn) => serializableTx(db, fn),
    // In a statement of its own, committed at once (db/counters.ts).
    nextCounter: (_tx, tenantId, name) => nextCounter(side.db, tenantId, name),
    writeEvent: writeEventPostgres,
    feed,
    deliveryStore: (policy) => announcingDisabled(pgDeliveryStore(delivery.db, url, policy), feed),
    dropQueue: (tenantId, webhookId, stopped) => dropQueue(delivery.db, tenantId, webhookId, stopped),
    // One count: the server does the work, serve only waits for it.
    countQueued: async () => {
      const r = await db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('due_at', 'is not', null).executeTakeFirst()
      return Number(r?.n ?? 0)
    },
    earliestDue: (chunk) => earliestDue(delivery.db, chunk),
    // The API writes beside a prune step: a row being queued again right now (a retry) is skipped.
    lockedForPrune: (q) => q.forUpdate().skipLocked(),
    keysVersion: () => keys.version(),
    // In a transaction that also announces it (NOTIFY, delivered to every listening process when
    // it commits), and counted by this process's key cache once committed.
    keysWrite: async (d, fn) => {
      const result = d.isTransaction
        ? await fn(d).then(async (r) => (await announceKeys(d), r))
        : await d.transaction().execute(async (tx) => {
          const r = await fn(tx)
          await announceKeys(tx)
          return r
        })
      keys.changed()
      return result
    },
    conflictOf: (err) => (isUniqueViolation(err) ? 'unique' : isRetryable(err) ? 'concurrent' : undefined),
    // Each try that loses costs its deadlock_timeout (1 s).
    rerunOnConflict: (run) => rerunRetryable(5, run),
    ping: async () => void (await health.pool.query('select 1')),
    // Several processes share the windows (CONTRACT §10).
    rateLimiter: () => new SharedRateLimiter(db),
    pruneRateWindows: (nowMs) => new SharedRateLimiter(db).prune(nowMs),
    recordServeUrl: (serveId, serveUrl, now) => recordOwnRow(db, serveId, serveUrl, now),
    // A row of another host counts as it is: its process cannot be checked from here.
    runningServeUrl: () => runningServeUrl(db, true),
    migrate: (observer) => migratePostgres(db, undefined, observer),
    migrationStatus: () => migrationStatusPostgres(db),
    startBackground: () => ({ stop: async () => {} }),
    snapshot: (fn) => db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute((tx) => fn(tx as unknown as Db)),
    // PostgreSQL stores no U+0000 in text: a source on it holds none.
    findUnstorable: async () => undefined,
    refusesNul: true,
    close,
  }
  return { db, engine, close }
}
