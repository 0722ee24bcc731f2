import type { Db } from '../../db/connect.ts'
import { rerunRetryable } from './common.ts'
import type { TxScope } from '../../db/tx.ts'

/**
 * Attempts of a PostgreSQL transaction that keeps losing serialization conflicts before the
 * error reaches the client (409). Each waits a random time up to 2^attempt ms, at most 100 ms
 * (≈1.7 s in all at worst): dozens of writers to one row, or a transaction that SSI keeps
 * picking as the pivot among a stream of inserts into the same index pages, all get through
 * (12 attempts of ≤ 64 ms did not: test/api/orders-behaviour.test.ts).
 */
const PG_ATTEMPTS = 40

/**
 * PostgreSQL's withTx() (db/tx.ts): SERIALIZABLE, so that the services' read-check-write rules
 * hold with several processes writing at once; a transaction PostgreSQL aborts as a
 * serialization failure (or a stale prepared plan) runs again from the start.
 */
export function serializableTx<T>(db: Db, fn: (scope: TxScope) => Promise<T>): Promise<T> {
  return rerunRetryable(PG_ATTEMPTS, () => _serializable(db, fn))
}

/** One SERIALIZABLE attempt of `fn`. */
async function _serializable<T>(db: Db, fn: (scope: TxScope) => Promise<T>): Promise<T> {
  const hooks: (() => void)[] = []
  const result = await db.transaction().setIsolationLevel('serializable').execute((tx) => fn({ tx, afterCommit: (h) => hooks.push(h) }))
  for (const hook of hooks) hook()
  return result
}
