import { registerTx, type Db, type DbInternals } from '../../db/connect.ts'
import type { TxScope } from '../../db/tx.ts'

/**
 * SQLite group commit (the engine's withTx()). The write transactions that requests start in one event-loop turn run
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

/** SQLite's withTx() for the database `db` (engine/sqlite/engine.ts makes one per database). */
export function groupCommit(db: Db, x: DbInternals): <T>(fn: (scope: TxScope) => Promise<T>) => Promise<T> {
  const group: Group = { queue: [], running: false }
  return <T>(fn: (scope: TxScope) => Promise<T>) => new Promise<T>((resolve, reject) => {
    group.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject })
    if (!group.running) _schedule(db, x, group)
  })
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
