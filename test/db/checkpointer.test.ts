import assert from 'node:assert/strict'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FileHandle } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import { startCheckpointer } from '../../src/engine/sqlite/checkpointer.ts'
import { openSqlite, type SqliteDatabase } from '../../src/engine/sqlite/sqlite.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { orderBody, startTestApp } from '../helpers/app.ts'
import { migratedDb, runJson, startServe } from '../helpers/cli.ts'

/**
 * serve's WAL checkpoints (src/engine/sqlite/checkpointer.ts): the event loop's connection never
 * checkpoints in a commit; a cycle every tenth of a second copies what is committed into the
 * database file, its fsyncs on the thread pool; the WAL starts over under constant writes;
 * a serve killed at any moment loses nothing it acknowledged.
 */
describe('WAL checkpoints off the event loop', () => {
  let dir: string
  const logger = createLogger('silent')
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-ckpt-'))
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  /** Rows the database file holds by itself, the WAL left out: what checkpoints have copied into it. */
  const inFileAlone = (file: string, table: string): number => {
    const copy = `${file}.alone-${Math.random().toString(36).slice(2)}`
    copyFileSync(file, copy)
    const db = openSqlite(copy)
    try {
      return db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number
    } finally {
      db.close()
      for (const x of ['', '-wal', '-shm']) rmSync(copy + x, { force: true })
    }
  }
  /** The WAL header's checkpoint sequence number: it goes up each time the WAL starts over. */
  const walSequence = (file: string): number => readFileSync(`${file}-wal`).readUInt32BE(12)

  const fresh = (name: string) => {
    const file = join(dir, name)
    const db = openSqlite(file)
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, pad BLOB)')
    db.pragma('wal_checkpoint(TRUNCATE)') // the table in the file itself
    return { file, db }
  }
  const insert = (db: SqliteDatabase, n: number) => {
    const s = db.prepare('INSERT INTO t (pad) VALUES (randomblob(3000))')
    for (let i = 0; i < n; i++) s.run()
  }

  test('serve: what the API commits reaches the database file within a cycle, and the WAL is gone after stop', async () => {
    const app = await startTestApp()
    const file = app.dbFile
    try {
      const tenant = await app.tenant('Ckpt')
      for (let i = 0; i < 5; i++) assert.equal((await tenant.request('POST', '/v1/orders', { body: orderBody() })).status, 201)
      // A handful of commits is far below SQLite's own threshold (1,000 frames): only the
      // checkpointer copies them into the file (and the schema the migrations wrote before them).
      const orders = () => {
        try {
          return inFileAlone(file, 'orders')
        } catch {
          return -1 // no orders table in the file yet
        }
      }
      const deadline = Date.now() + 5_000
      while (orders() < 5 && Date.now() < deadline) await sleep(50)
      assert.equal(orders(), 5)
      await app.server.stop()
      assert.equal(existsSync(`${file}-wal`), false, 'the last connection closed checkpointed and removed the WAL')
    } finally {
      await app.close()
    }
  })

  test("the event loop's connection does not checkpoint on commit", async () => {
    const { file, db } = fresh('own.db')
    const c = startCheckpointer({ file, db, logger, everyMs: 60_000 })
    try {
      assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 0)
      insert(db, 2_500) // ≈ 2,500 frames: SQLite alone would have checkpointed twice
      assert.equal(inFileAlone(file, 't'), 0)
    } finally {
      await c.stop()
      db.close()
    }
  })

  /** Frames the WAL file has room for: the most it ever held since it was created or cut back. */
  const walFrames = (file: string) => Math.floor((statSync(`${file}-wal`).size - 32) / (4096 + 24))
  /**
   * A flush that tells who waits for it, so that a test's writer commits a counted number of
   * rows per flush, never a number that depends on how long the flushes take on a busy machine.
   */
  const flushes = (before: () => void = () => {}) => {
    let waiting: (() => void)[] = []
    return {
      datasync: async (f: FileHandle) => {
        before()
        await f.datasync()
        for (const w of waiting) w()
        waiting = []
      },
      /** The next flush, or 20 ms when none comes (every frame copied, the checkpointer idle). */
      next: () => Promise.race([new Promise<void>((resolve) => waiting.push(resolve)), sleep(20)]),
    }
  }

  test('under constant writes the WAL is copied and starts over, staying near its threshold', async () => {
    const { file, db } = fresh('constant.db')
    const restartFrames = 200
    // Commits arrive during every flush, as they do under load: five rows of 3,000 bytes before
    // each, so no cycle that flushes finds the WAL wholly copied at its end; and one more after
    // each, so that cycles go on once it has been.
    let written = 0
    const f = flushes(() => {
      insert(db, 5)
      written += 5
    })
    insert(db, 1) // the WAL's first header
    written = 1
    const seq0 = walSequence(file)
    let largest = 0
    const c = startCheckpointer({ file, db, logger, everyMs: 1, restartFrames, walSizeLimit: 1024 * 1024, datasync: f.datasync })
    try {
      while (written < 10 * restartFrames) {
        insert(db, 1)
        written += 1
        largest = Math.max(largest, walFrames(file))
        await f.next()
      }
      assert.ok(walSequence(file) >= seq0 + 5, `the WAL started over, again and again (${walSequence(file) - seq0} times)`)
      // Its threshold, and the few commits of the cycle that reached it.
      assert.ok(largest < 2 * restartFrames, `the WAL stayed near its threshold (${largest} frames at most; ${written} rows went through it)`)
    } finally {
      await c.stop()
      db.close()
    }
    const reopened = openSqlite(file)
    assert.equal(reopened.prepare('SELECT count(*) FROM t').pluck().get(), written)
    reopened.close()
  })

  test('a writer that waits on room() keeps the WAL near its threshold; one that does not takes it to four times that', async () => {
    const run = async (name: string, waits: boolean) => {
      const { file, db } = fresh(name)
      const f = flushes()
      const c = startCheckpointer({ file, db, logger, everyMs: 1, restartFrames: 400, tailFrames: 4, datasync: f.datasync })
      let largest = 0
      try {
        // Five rows per flush: a cycle's two flushes let ten through, more than its synchronous rest takes.
        for (let rows = 0; rows < 3_000; rows += 5) {
          if (waits) await c.room()
          insert(db, 5)
          largest = Math.max(largest, walFrames(file))
          await f.next()
        }
      } finally {
        await c.stop()
        db.close()
      }
      return largest
    }
    const waiting = await run('room.db', true)
    const writing = await run('no-room.db', false)
    assert.ok(writing >= 1_600, `without waiting, the WAL reached four times its threshold before a synchronous checkpoint (${writing} frames)`)
    assert.ok(waiting < 800, `waiting on room(), it stayed near its threshold (${waiting} frames)`)
  })

  test('a reader holding an old snapshot holds the copy back, without the cycles spinning or room() waiting; once it ends, the next cycles copy the rest with no new commit', async () => {
    const { file, db } = fresh('reader.db')
    insert(db, 10)
    const reader = openSqlite(file)
    reader.exec('BEGIN')
    assert.equal(reader.prepare('SELECT count(*) FROM t').pluck().get(), 10)
    insert(db, 40) // past the threshold below, with far more left than a synchronous rest
    let flushed = 0
    const datasync = (f: FileHandle) => (flushed++, f.datasync())
    const c = startCheckpointer({ file, db, logger, everyMs: 50, restartFrames: 40, tailFrames: 4, datasync })
    try {
      await sleep(300)
      assert.ok(inFileAlone(file, 't') <= 10, 'nothing past the reader’s snapshot was copied')
      assert.ok(flushed <= 16, `a cycle every 50 ms, not one after the other (${flushed} flushes in 300 ms)`)
      await c.room() // resolves: nothing a writer could wait for
      reader.exec('COMMIT')
      const deadline = Date.now() + 5_000
      while (inFileAlone(file, 't') < 50 && Date.now() < deadline) await sleep(20)
      assert.equal(inFileAlone(file, 't'), 50)
    } finally {
      reader.close()
      await c.stop()
      db.close()
    }
  })

  test('serve killed (SIGKILL) while it writes and checkpoints: the file is whole and holds every order it acknowledged', async () => {
    const db = await migratedDb(join(dir, 'killed.db'))
    const tenant = await runJson(['tenants', 'create', '--name', 'Killed', '--db', db])
    const key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])).key
    const server = await startServe(['--db', db, '--log-level', 'warn'])
    const acknowledged: string[] = []
    let killed = false
    const client = async () => {
      while (!killed) {
        try {
          const r = await fetch(`${server.url}/v1/orders`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(orderBody()) })
          if (r.status === 201) acknowledged.push(((await r.json()) as { data: { id: string } }).data.id)
        } catch { /* killed mid-request */ }
      }
    }
    const clients = Array.from({ length: 6 }, client)
    await sleep(1_200 + Math.random() * 400) // ≈ a dozen cycles, the kill at any point of one
    await server.kill()
    killed = true
    await Promise.all(clients)
    assert.ok(acknowledged.length > 50, `orders written before the kill (${acknowledged.length})`)
    const after = openSqlite(db)
    try {
      assert.equal(after.pragma('integrity_check', { simple: true }), 'ok')
      const stored = new Set(after.prepare('SELECT id FROM orders').pluck().all() as string[])
      assert.deepEqual(acknowledged.filter((id) => !stored.has(id)), [], 'every acknowledged order is there')
    } finally {
      after.close()
    }
  })
})
