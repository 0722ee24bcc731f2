import type { Transaction } from 'kysely'
import type { Database } from './schema.ts'
import { registerTx, type Db } from './connect.ts'

export type Tx = Transaction<Database>

export interface TxScope {
  tx: Tx
  /** Runs after a successful commit (never after a rollback), e.g. to wake the delivery worker. */
  afterCommit(fn: () => void): void
}

/** One write transaction; hooks registered inside run once it has committed. */
export async function withTx<T>(db: Db, fn: (scope: TxScope) => Promise<T>): Promise<T> {
  const hooks: (() => void)[] = []
  const result = await db.transaction().execute((tx) => {
    registerTx(tx, db)
    return fn({ tx, afterCommit: (h) => hooks.push(h) })
  })
  for (const hook of hooks) hook()
  return result
}
