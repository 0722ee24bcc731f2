import type { Transaction } from 'kysely'
import type { Database } from './schema.ts'
import { internalsOf, registerTx, type Db, type DbInternals } from './connect.ts'
import { rerunRetryable } from './pg-common.ts'

export type Tx = Transaction<Database>

export interface TxScope {
  tx: Tx
  /** Runs after a successful commit (never after a rollback), e.g. to wake the delivery worker. */
  afterCommit(fn: () => void): void
}

/**
 * Attempts of a PostgreSQL transaction that keeps losing serialization conflicts before the
 * error reaches the client (409). Each waits a random time up to 2^attempt ms, at most 100 ms
 * (≈1.7 s in all at worst): dozens of writers to one row, or a transaction that SSI keeps
 * picking as the pivot among a stream of inserts into the same index pages, all get through
 * (12 attempts of ≤ 64 ms did not: test/api/orders-behaviour.test.ts).
 */
const PG_ATTEMPTS = 40

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
  const x = internalsOf(db)
  if (x) return _grouped(db, x, fn)
  return rerunRetryable(PG_ATTEMPTS, () => _serializable(db, fn))
}

/** PostgreSQL: one SERIALIZABLE attempt of `fn`. */
async function _serializable<T>(db: Db, fn: (scope: TxScope) => Promise<T>): Promise<T> {
  const hooks: (() => void)[] = []
  const result = await db.transaction().setIsolationLevel('serializable').execute((tx) => {
    registerTx(tx, db)
    return fn({ tx, afterCommit: (h) => hooks.push(h) })
  })
  for (const hook of hooks) hook()
  return result
}

/**
 * SQLite group commit. The write transactions that requests start in one event-loop turn run
 * one after another inside a single SQLite transaction, each after the first in a savepoint of
 * its own, and commit together; each caller's promise settles only after that commit (so no
 * answer is sent before its data is durable as far as synchronous=NORMAL makes it), and its
 * afterCommit hooks run then. A member that throws is rolled back to its savepoint (the first:
 * with the transaction, and the rest of the group runs in the next) and gets its error; the
 * others are not affected. Consecutive orders share their b-tree pages, so one commit writes far fewer
 * WAL frames than one per request.
 *
 * The group holds the connection from its BEGIN IMMEDIATE to its COMMIT, so nothing outside it
 * (a GET's read, the delivery loop, a backup) ever sees a member's uncommitted writes. A member
 * runs exactly as it did in a transaction of its own: one writer, its reads see the members
 * before it, which have all succeeded (the rules checked before writing still hold).
 */
interface Member {
  fn: (scope: TxScope) => Promise<unknown>
  resolve(value: unknown): void
  reject(err: unknown): void
}

interface Group {
  queue: Member[]
  running: boolean
}

/** At most this many transactions per commit: reads waiting for the connection wait at most one group. */
export const GROUP_MAX = 32
const _groups = new WeakMap<Db, Group>()

function _grouped<T>(db: Db, x: DbInternals, fn: (scope: TxScope) => Promise<T>): Promise<T> {
  const group = _groupOf(db)
  return new Promise<T>((resolve, reject) => {
    group.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject })
    if (!group.running) _schedule(db, x, group)
  })
}

function _groupOf(db: Db): Group {
  let g = _groups.get(db)
  if (!g) _groups.set(db, (g = { queue: [], running: false }))
  return g
}

/** Drains the queue after this turn (the rest of the turn's requests join first). */
function _schedule(db: Db, x: DbInternals, g: Group): void {
  g.running = true
  setImmediate(async () => {
    try {
      while (g.queue.length > 0) await _commitGroup(db, x, g, g.queue.splice(0, GROUP_MAX))
    } catch (err) {
      for (const m of g.queue.splice(0)) m.reject(err)
    }
    g.running = false
    // A caller answered by the last group may have queued its next transaction while this
    // drain was finishing (it saw `running` still set): start again for it.
    if (g.queue.length > 0) _schedule(db, x, g)
  })
}

async function _commitGroup(db: Db, x: DbInternals, g: Group, members: Member[]): Promise<void> {
  const done: { m: Member; result: unknown; hooks: (() => void)[] }[] = []
  const failed = new Set<Member>()
  let next = 0
  try {
    await db.transaction().execute(async (tx) => {
      registerTx(tx, db)
      for (; next < members.length; next++) {
        const m = members[next]!
        const hooks: (() => void)[] = []
        // The first member runs without a savepoint (SQLite copies every page a savepoint's
        // member changes into its journal first; a lone POST's writes cost 9 % less without):
        // if it fails, the whole transaction, which holds nothing else, is rolled back and the
        // rest of the group runs in the next one.
        const first = next === 0
        if (!first) x.prepare('SAVEPOINT travelops_tx').run()
        let result: unknown
        try {
          result = await m.fn({ tx, afterCommit: (h) => hooks.push(h) })
        } catch (err) {
          failed.add(m)
          m.reject(err)
          // Some errors (I/O, disk full) end SQLite's whole transaction: then the group is lost.
          if (first || !x.sqlite.inTransaction) throw err
          x.prepare('ROLLBACK TO travelops_tx').run()
          x.prepare('RELEASE travelops_tx').run()
          continue
        }
        if (!first) x.prepare('RELEASE travelops_tx').run()
        done.push({ m, result, hooks })
      }
    })
  } catch (err) {
    // Nothing of this group was committed: every member run so far that has no answer yet
    // fails with the cause; those not yet run go back to the front of the queue.
    const ran = Math.min(next + 1, members.length)
    for (const m of members.slice(0, ran)) if (!failed.has(m)) m.reject(err)
    g.queue.unshift(...members.slice(ran))
    return
  }
  for (const d of done) {
    // A hook that throws fails its own caller (as it did with a transaction of its own), no other.
    try {
      for (const hook of d.hooks) hook()
      d.m.resolve(d.result)
    } catch (err) {
      d.m.reject(err)
    }
  }
}
