import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { type OpenSqliteDb } from '../../src/engine/port.ts'
import { openDb } from '../../src/engine/sqlite/open.ts'
import { openSqlite, type SqliteDatabase } from '../../src/engine/sqlite/sqlite.ts'
import { type TxScope } from '../../src/db/tx.ts'
import { withTx } from '../../src/engine/tx.ts'
import { GROUP_MAX } from '../../src/engine/sqlite/group-commit.ts'

/**
 * SQLite group commit (src/db/tx.ts): the write transactions started in one event-loop turn
 * commit together, each in a savepoint; every caller is answered after the shared commit, a
 * failing member leaves the others alone, nobody outside the group sees a member's writes
 * before the commit. Commits are counted in the WAL file itself: each commit ends with one
 * frame that carries the database size (checkpoints are off for this connection, so the WAL
 * only grows).
 */
describe('SQLite group commit', () => {
  let dir: string
  let o: OpenSqliteDb
  let other: SqliteDatabase
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-group-'))
    o = openDb(join(dir, 'g.db'))
    o.sqlite.pragma('wal_autocheckpoint = 0')
    other = openSqlite(join(dir, 'g.db'))
  })
  after(async () => {
    other.close()
    await o.close()
    rmSync(dir, { recursive: true, force: true })
  })

  /** Commit frames in the WAL (frame header: page number, then the database size on a commit's last frame, then the salts). */
  const commits = () => {
    const wal = readFileSync(join(dir, 'g.db-wal'))
    const pageSize = wal.readUInt32BE(8)
    let n = 0
    for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
      if (wal.readUInt32BE(at + 8) !== wal.readUInt32BE(16) || wal.readUInt32BE(at + 12) !== wal.readUInt32BE(20)) break
      if (wal.readUInt32BE(at + 4) !== 0) n++
    }
    return n
  }
  const names = () => (other.prepare("SELECT name FROM tenants WHERE name LIKE 'g-%' ORDER BY name").pluck().all() as string[])
  const insert = (scope: TxScope, name: string) =>
    scope.tx.insertInto('tenants').values({ id: `ten_${name}`, name, created_at: new Date().toISOString() }).execute()
  const clear = () => other.prepare("DELETE FROM tenants WHERE name LIKE 'g-%'").run()

  test('transactions started in one turn commit once, and every caller gets its own result after the commit', async () => {
    clear()
    const before = commits()
    const hooks: string[] = []
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => withTx(o.engine, async (scope) => {
      await insert(scope, `g-${i}`)
      scope.afterCommit(() => hooks.push(`g-${i}:${names().length}`)) // runs after the commit: the other connection sees all ten
      return i * 2
    })))
    assert.deepEqual(results, Array.from({ length: 10 }, (_, i) => i * 2))
    assert.equal(commits() - before, 1, 'ten transactions, one commit')
    assert.equal(names().length, 10)
    assert.deepEqual(hooks, Array.from({ length: 10 }, (_, i) => `g-${i}:10`))
  })

  test('a member that throws is rolled back alone: its writes are gone, its caller gets its error, its hooks never run', async () => {
    clear()
    const hooks: string[] = []
    const settled = await Promise.allSettled(['g-a', 'g-b', 'g-c'].map((name) => withTx(o.engine, async (scope) => {
      await insert(scope, name)
      scope.afterCommit(() => hooks.push(name))
      if (name === 'g-b') throw new Error('g-b refuses')
      return name
    })))
    assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'rejected', 'fulfilled'])
    assert.equal((settled[1] as PromiseRejectedResult).reason.message, 'g-b refuses')
    assert.deepEqual(names(), ['g-a', 'g-c'])
    assert.deepEqual(hooks, ['g-a', 'g-c'])
  })

  test('the first member, which runs without a savepoint, fails alone too: the others are committed by the next group', async () => {
    clear()
    const before = commits()
    const hooks: string[] = []
    const settled = await Promise.allSettled(['g-f1', 'g-f2', 'g-f3'].map((name) => withTx(o.engine, async (scope) => {
      await insert(scope, name)
      scope.afterCommit(() => hooks.push(name))
      if (name === 'g-f1') throw new Error('g-f1 refuses')
      return name
    })))
    assert.deepEqual(settled.map((s) => s.status), ['rejected', 'fulfilled', 'fulfilled'])
    assert.equal((settled[0] as PromiseRejectedResult).reason.message, 'g-f1 refuses')
    assert.deepEqual(settled.slice(1).map((s) => (s as PromiseFulfilledResult<string>).value), ['g-f2', 'g-f3'])
    assert.deepEqual(names(), ['g-f2', 'g-f3'])
    assert.deepEqual(hooks, ['g-f2', 'g-f3'])
    assert.equal(commits() - before, 1, 'the failed transaction committed nothing; the other two, one commit')
  })

  test('a transaction alone opens no savepoint; the second of a group does', async () => {
    clear()
    // RELEASE of the group's savepoint name succeeds only while one is open (then it is opened again).
    const inSavepoint = (scope: TxScope) => sql`release travelops_tx`.execute(scope.tx).then(() => true, () => false)
      .then(async (open) => { if (open) await sql`savepoint travelops_tx`.execute(scope.tx); return open })
    const [alone] = await Promise.all([withTx(o.engine, inSavepoint)])
    assert.equal(alone, false)
    const grouped = await Promise.all([withTx(o.engine, inSavepoint), withTx(o.engine, inSavepoint)])
    assert.deepEqual(grouped, [false, true])
  })

  test('a failing statement (a unique violation) rolls back only its member, which sees the constraint error', async () => {
    clear()
    const settled = await Promise.allSettled(['g-x', 'g-x', 'g-y'].map((name, i) => withTx(o.engine, async (scope) => {
      await scope.tx.insertInto('tenants').values({ id: `ten_${name}`, name: `${name}-${i}`, created_at: new Date().toISOString() }).execute()
      return i
    })))
    assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'rejected', 'fulfilled'])
    assert.match(String((settled[1] as PromiseRejectedResult).reason), /UNIQUE constraint failed/)
    assert.deepEqual(names(), ['g-x-0', 'g-y-2'])
  })

  test('nothing outside the group sees a member\'s writes before the commit: a read waits for it', async () => {
    clear()
    let release!: () => void
    const held = new Promise<void>((r) => { release = r })
    const writes = Promise.all(['g-r1', 'g-r2'].map((name) => withTx(o.engine, async (scope) => {
      await insert(scope, name)
      if (name === 'g-r1') await held // the group stays open (a test may wait; services never do)
    })))
    await new Promise((r) => setImmediate(r)) // the group has started and holds the connection
    await new Promise((r) => setTimeout(r, 20))
    const order: string[] = []
    const read = o.db.selectFrom('tenants').select('name').where('name', 'like', 'g-r%').execute().then((rows) => {
      order.push(`read ${rows.length}`)
    })
    await new Promise((r) => setTimeout(r, 20))
    assert.equal(order.length, 0, 'the read waits while the group is open')
    assert.deepEqual(names(), [], 'another connection sees nothing before the commit')
    release()
    await writes.then(() => order.push('committed'))
    await read
    assert.ok(order.includes('read 2'), `the read ran after the commit and saw both rows: ${order.join(', ')}`)
  })

  test(`more than ${GROUP_MAX} at once are split into groups of at most ${GROUP_MAX}`, async () => {
    clear()
    const before = commits()
    const n = GROUP_MAX * 2 + 5
    await Promise.all(Array.from({ length: n }, (_, i) => withTx(o.engine, (scope) => insert(scope, `g-${String(i).padStart(3, '0')}`))))
    assert.equal(names().length, n)
    assert.equal(commits() - before, 3)
  })

  test('when an error ends SQLite\'s whole transaction, the members before fail with it and those after run in the next group', async () => {
    clear()
    const settled = await Promise.allSettled(['g-1', 'g-2', 'g-3', 'g-4'].map((name) => withTx(o.engine, async (scope) => {
      await insert(scope, name)
      if (name === 'g-2') {
        await sql`rollback`.execute(scope.tx) // what SQLite does itself on some I/O errors
        throw new Error('g-2 lost the transaction')
      }
      return name
    })))
    assert.deepEqual(settled.map((s) => s.status), ['rejected', 'rejected', 'fulfilled', 'fulfilled'])
    assert.equal((settled[1] as PromiseRejectedResult).reason.message, 'g-2 lost the transaction')
    assert.deepEqual(names(), ['g-3', 'g-4'])
  })

  test('an afterCommit hook that throws fails its own caller only; the others are answered', async () => {
    clear()
    const settled = await Promise.allSettled(['g-h1', 'g-h2', 'g-h3'].map((name) => withTx(o.engine, async (scope) => {
      await insert(scope, name)
      if (name === 'g-h2') scope.afterCommit(() => { throw new Error('hook of g-h2') })
      return name
    })))
    assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'rejected', 'fulfilled'])
    assert.deepEqual(names(), ['g-h1', 'g-h2', 'g-h3'], 'committed all the same')
  })

  test('a caller that starts its next transaction as soon as the last one is answered is not left waiting', async () => {
    clear()
    // Seen hanging: the answer reached the caller while the drain was finishing, the caller
    // queued its next transaction, saw the drain still running, and nobody ever ran it.
    for (let i = 0; i < 5; i++) await withTx(o.engine, (scope) => insert(scope, `g-seq-${i}`))
    assert.equal(names().length, 5)
  })

  test('a transaction started later, on its own, still commits (and one after a failed group too)', async () => {
    clear()
    await withTx(o.engine, (scope) => insert(scope, 'g-late'))
    assert.deepEqual(names(), ['g-late'])
  })

  // Each member's savepoint keeps the pages it changes as they were, to roll back to: SQLite's
  // sub-journal. Past 64 KiB it went to a temporary file (a new one in /var/tmp per group, two
  // writes per page), which was two thirds of a POST's system time under load; with temp_store =
  // MEMORY (src/engine/sqlite/sqlite.ts) it stays in memory. Seen from inside the group's last member: no
  // deleted temporary file is open then that was not open before.
  test("a group's savepoints keep their journal in memory, not in a temporary file", async () => {
    clear()
    const deletedFiles = () => readdirSync('/proc/self/fd').flatMap((fd) => {
      try {
        const target = readlinkSync(`/proc/self/fd/${fd}`)
        return target.endsWith(' (deleted)') ? [target] : []
      } catch {
        return [] // closed meanwhile (readdir's own descriptor)
      }
    })
    // Rows over many pages first, so that each member below changes pages that existed before its savepoint.
    await withTx(o.engine, async (scope) => {
      for (let i = 0; i < 200; i++) await insert(scope, `g-${String(i).padStart(3, '0')}-${'x'.repeat(400)}`)
    })
    const before = deletedFiles()
    let during: string[] = []
    const members = 40
    await Promise.all(Array.from({ length: members }, (_, m) => withTx(o.engine, async (scope) => {
      // Each member rewrites every row: all the table's pages, again in each savepoint.
      await sql`UPDATE tenants SET name = name || ${String(m % 10)} WHERE name LIKE 'g-%'`.execute(scope.tx)
      if (m === members - 1) during = deletedFiles()
    })))
    assert.deepEqual(during.filter((f) => !before.includes(f)), [])
    assert.equal(names().length, 200)
  })
})
