import type { Transaction } from 'kysely'
import type { Database } from './schema.ts'
import { internalsOf, registerTx, type Db } from './connect.ts'
import { isRetryable } from './pg-common.ts'

export type Tx = Transaction<Database>

export interface TxScope {
  tx: Tx
  /** Runs after a successful commit (never after a rollback), e.g. to wake the delivery worker. */
  afterCommit(fn: () => void): void
}

/** Attempts of a PostgreSQL transaction that keeps losing serialization conflicts before the error reaches the client. */
const PG_ATTEMPTS = 12

/**
 * One write transaction; hooks registered inside run once it has committed.
 *
 * On SQLite one writer at a time (BEGIN IMMEDIATE) makes every read-then-write rule of the
 * services hold: the balance checked before a payment, the slug checked before an insert, the
 * status checked before a confirm. On PostgreSQL, with several processes writing at once, the
 * same code runs SERIALIZABLE: PostgreSQL aborts any transaction whose outcome could differ
 * from running them one at a time (SQLSTATE 40001), and it is run again here from the start,
 * then sees the winner's commit and answers as it would on SQLite (409, 422). `fn` must
 * therefore only touch the database (no network, no files), which is the rule anyway.
 */
export async function withTx<T>(db: Db, fn: (scope: TxScope) => Promise<T>): Promise<T> {
  if (internalsOf(db)) return _once(db, fn, false)
  for (let attempt = 1; ; attempt++) {
    try {
      return await _once(db, fn, true)
    } catch (err) {
      if (!isRetryable(err) || attempt >= PG_ATTEMPTS) throw err
      await new Promise((r) => setTimeout(r, Math.random() * 2 ** Math.min(attempt, 6)))
    }
  }
}

async function _once<T>(db: Db, fn: (scope: TxScope) => Promise<T>, serializable: boolean): Promise<T> {
  const hooks: (() => void)[] = []
  const builder = serializable ? db.transaction().setIsolationLevel('serializable') : db.transaction()
  const result = await builder.execute((tx) => {
    registerTx(tx, db)
    return fn({ tx, afterCommit: (h) => hooks.push(h) })
  })
  for (const hook of hooks) hook()
  return result
}
