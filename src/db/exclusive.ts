import type { Db, DbInternals } from './connect.ts'
import { internalsOf, internalsOfTx } from './connect.ts'
import type { Tx } from './tx.ts'

/** Synchronous access to the connection inside exclusive(): cached prepared statements, no kysely. */
export interface SyncDb {
  all<T>(sql: string, ...params: unknown[]): T[]
  get<T>(sql: string, ...params: unknown[]): T | undefined
  run(sql: string, ...params: unknown[]): { changes: number }
}

/**
 * Runs `fn` synchronously on the connection in the serialising driver's turn (no kysely query
 * or transaction is in progress meanwhile), inside one BEGIN IMMEDIATE transaction when
 * `write` is set (rolled back if `fn` throws). For loops like the delivery worker that run many
 * small statements at a time: each kysely query costs several promise turns and its building;
 * a cached statement run synchronously does not. Never call it from inside a transaction.
 */
export async function exclusive<T>(db: Db, fn: (q: SyncDb) => T, opts: { write?: boolean } = {}): Promise<T> {
  const x = internalsOf(db)
  if (!x) throw new Error('exclusive(): the database was not opened with openDb()')
  const q = _syncDb(x)
  await x.lock()
  try {
    return opts.write ? x.sqlite.transaction(() => fn(q)).immediate() : fn(q)
  } finally {
    x.unlock()
  }
}

/**
 * The same synchronous access inside a transaction SQLite's withTx() opened (its connection is
 * held for it): for code that runs in a request's transaction and in exclusive()'s alike (the
 * SQLite outbox writer, engine/sqlite/outbox.ts). Throws for any other transaction.
 */
export function syncDbOfTx(tx: Tx): SyncDb {
  const x = internalsOfTx(tx)
  if (!x) throw new Error('syncDbOfTx(): not a transaction SQLite\'s withTx() opened')
  return _syncDb(x)
}

function _syncDb(x: DbInternals): SyncDb {
  return {
    all: <R>(sql: string, ...params: unknown[]) => x.prepare(sql).all(...params) as R[],
    get: <R>(sql: string, ...params: unknown[]) => x.prepare(sql).get(...params) as R | undefined,
    run: (sql, ...params) => x.prepare(sql).run(...params),
  }
}
