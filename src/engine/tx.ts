import type { TxScope } from '../db/tx.ts'
import type { Engine } from './port.ts'

/**
 * One write transaction; hooks registered inside run once it has committed.
 *
 * On SQLite one writer at a time (BEGIN IMMEDIATE) makes every read-then-write rule of the
 * services hold: the balance checked before a payment, the slug checked before an insert, the
 * status checked before a confirm. On PostgreSQL, with several processes writing at once, the
 * same code runs SERIALIZABLE: PostgreSQL aborts any transaction whose outcome could differ
 * from running them one at a time (SQLSTATE 40001), and it is run again here from the start,
 * then sees the winner's commit and answers as it would on SQLite (409, 422). `fn` must
 * therefore only touch the database (no network, no files), which is the rule anyway. The
 * engine's adapter runs it: sqlite/group-commit.ts, postgres/transactions.ts.
 */
export function withTx<T>(engine: Engine, fn: (scope: TxScope) => Promise<T>): Promise<T> {
  return engine.withTx(fn)
}

