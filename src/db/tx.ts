import type { Transaction } from 'kysely'
import type { Database } from './schema.ts'

export type Tx = Transaction<Database>

export interface TxScope {
  tx: Tx
  /** Runs after a successful commit (never after a rollback), e.g. to wake the delivery worker. */
  afterCommit(fn: () => void): void
}
