import assert from 'node:assert/strict'
import { hostname } from 'node:os'
import type { Db } from '../../src/db/connect.ts'
import { loadMigrationFiles } from '../../src/db/migration-files.ts'
import { procStart } from '../../src/db/processes.ts'
import { openDatabase } from '../../src/engine/open.ts'
import type { Engine } from '../../src/engine/port.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { eachEngine } from './each-engine.ts'

// The rest of the engine port as a contract, on a real database of each engine: the key-change
// watch, the rate windows, the serve record, migrations, the hooks of `db copy`, ping() and
// background work. Where the adapters differ by design, each engine's test names what it
// documents (engine/sqlite/engine.ts, engine/postgres/engine.ts).

let n = 0
const insertKey = (db: Db, tenantId: string) => db.insertInto('api_keys').values({
  id: `key_engine_${++n}`, tenant_id: tenantId, name: null, key_hash: `hash_${n}_${crypto.randomUUID()}`, key_prefix: 'to_test', scopes: '["*"]',
  rate_limit: null, created_at: new Date().toISOString(), expires_at: null, revoked_at: null, last_used_at: null,
}).returning('id').executeTakeFirstOrThrow()

/**
 * Waits for `ready()` (an event of another connection: PostgreSQL's LISTEN), polling; fails
 * after 10 s so that a watch that never hears anything fails the test instead of hanging it.
 */
async function until<T>(what: string, ready: () => T | null | false): Promise<T> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const v = ready()
    if (v !== null && v !== false) return v
    if (Date.now() > deadline) throw new Error(`still waiting for ${what} after 10 s`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

/** keysVersion() once the engine can tell (PostgreSQL: once its LISTEN connection listens; null until then: nothing is cached). */
const versionOf = (engine: Engine) => until('keysVersion() to be known', () => engine.keysVersion())

eachEngine('the key-change watch: keysVersion(), keysWrite()', (s) => {
  s.test('a key written through keysWrite() changes the version once committed, outside a transaction or inside one', async (env) => {
    const v0 = await versionOf(env.engine)
    const { id } = await env.engine.keysWrite(env.opened.db, (db) => insertKey(db, env.tenantId))
    const v1 = await versionOf(env.engine)
    assert.notEqual(v1, v0)
    await env.engine.withTx(({ tx }) => env.engine.keysWrite(tx as unknown as Db, (db) => db.updateTable('api_keys').set({ revoked_at: new Date().toISOString() }).where('id', '=', id).execute()))
    assert.notEqual(await versionOf(env.engine), v1)
  })

  if (s.name === 'sqlite') {
    s.test('another connection\'s commit changes the version at once (data_version); this connection\'s last_used_at touch does not', async (env) => {
      const v0 = await versionOf(env.engine)
      await env.opened.db.updateTable('api_keys').set({ last_used_at: new Date().toISOString() }).execute()
      assert.equal(await versionOf(env.engine), v0)
      const other = await env.another()
      await insertKey(other.db, env.tenantId)
      assert.notEqual(await versionOf(env.engine), v0)
    })
  } else {
    s.test('another process\'s keysWrite() is heard (NOTIFY on its commit, LISTEN here)', async (env) => {
      const v0 = await versionOf(env.engine)
      const other = await env.another()
      await other.engine.keysWrite(other.db, (db) => insertKey(db, env.tenantId))
      await until('the other process\'s key write to be heard', () => env.engine.keysVersion() !== v0 && env.engine.keysVersion() !== null)
    })
  }
})

eachEngine('the rate windows: rateLimiter(), pruneRateWindows()', (s) => {
  const hour = 3_600_000
  const now = Math.floor(Date.now() / hour) * hour + 1_000

  if (s.name === 'sqlite') {
    s.test('each limiter counts its own windows, in memory: one serve per file, a restart starts fresh; nothing is kept in the database', async (env) => {
      const a = env.engine.rateLimiter()
      const b = env.engine.rateLimiter()
      try {
        assert.deepEqual([(await a.hit('key_a', 3, now, env.tenantId)).allowed, (await a.hit('key_a', 3, now, env.tenantId)).allowed], [true, true])
        assert.deepEqual([(await b.hit('key_a', 3, now, env.tenantId)).allowed, (await b.hit('key_a', 3, now, env.tenantId)).allowed], [true, true])
        assert.deepEqual([(await a.hit('key_a', 3, now, env.tenantId)).allowed, (await a.hit('key_a', 3, now, env.tenantId)).allowed], [true, false])
      } finally {
        await a.close()
        await b.close()
      }
      await env.engine.pruneRateWindows(now + 2 * hour)
      assert.equal((await env.opened.db.selectFrom('rate_windows').select('key_id').execute()).length, 0)
    })
  } else {
    s.test('every limiter of the database counts against the same windows (several serve processes); hours before the last are pruned', async (env) => {
      const other = await env.another()
      const a = env.engine.rateLimiter()
      const b = other.engine.rateLimiter()
      try {
        assert.deepEqual([(await a.hit('key_a', 3, now, env.tenantId)).allowed, (await a.hit('key_a', 3, now, env.tenantId)).allowed], [true, true])
        assert.deepEqual([(await b.hit('key_a', 3, now, env.tenantId)).allowed, (await b.hit('key_a', 3, now, env.tenantId)).allowed], [true, false])
        assert.equal((await a.hit('key_a', 3, now, env.tenantId)).allowed, false)
        // The next hour is a new window.
        assert.equal((await b.hit('key_a', 3, now + hour, env.tenantId)).allowed, true)
      } finally {
        await a.close()
        await b.close()
      }
      const h = Math.floor(now / hour)
      const hours = async () => (await env.opened.db.selectFrom('rate_windows').select('hour').where('key_id', '=', 'key_a').orderBy('hour').execute()).map((r) => r.hour)
      assert.deepEqual(await hours(), [h, h + 1])
      // The current hour and the one before it are kept.
      await env.engine.pruneRateWindows(now + hour)
      assert.deepEqual(await hours(), [h, h + 1])
      await env.engine.pruneRateWindows(now + 2 * hour)
      assert.deepEqual(await hours(), [h + 1])
    })
  }
})

eachEngine('the serve record: recordServeUrl(), runningServeUrl()', (s) => {
  if (s.name === 'sqlite') {
    s.test('the row of the serve lock gets the address, which runningServeUrl() names (a wildcard as localhost); the lock\'s release removes the row', async (env) => {
      assert.equal(await env.engine.runningServeUrl(), undefined)
      // The row that serve's lock writes (engine/sqlite/open.ts), for this process.
      await env.opened.db.insertInto('serve_processes').values({
        id: 'srv_engine', pid: process.pid, host: hostname(), file: env.target, proc_start: procStart(process.pid), started_at: new Date().toISOString(), url: null,
      }).execute()
      const forget = await env.engine.recordServeUrl('srv_engine', 'http://0.0.0.0:4010', new Date())
      assert.equal(await env.engine.runningServeUrl(), 'http://localhost:4010')
      await forget()
      assert.equal(await env.engine.runningServeUrl(), 'http://localhost:4010')
    })
  } else {
    s.test('each serve writes a row of its own, which runningServeUrl() names (the newest), and removes it when it stops', async (env) => {
      assert.equal(await env.engine.runningServeUrl(), undefined)
      const forgetA = await env.engine.recordServeUrl('srv_a', 'http://127.0.0.1:4010', new Date(Date.now() - 1_000))
      const forgetB = await env.engine.recordServeUrl('srv_b', 'http://127.0.0.1:4011/api/', new Date())
      assert.equal(await env.engine.runningServeUrl(), 'http://127.0.0.1:4011/api')
      await forgetB()
      assert.equal(await env.engine.runningServeUrl(), 'http://127.0.0.1:4010')
      await forgetA()
      assert.equal(await env.engine.runningServeUrl(), undefined)
    })
  }
})

eachEngine('migrations: migrate(), migrationStatus()', (s) => {
  const names = loadMigrationFiles(s.name === 'sqlite' ? 'sqlite' : 'postgres').map((f) => f.name)

  s.test('a new database: every migration pending, then applied in order by migrate(), which tells its observer; a second migrate() applies nothing', async (env) => {
    const fresh = await openDatabase(await env.fresh(), { create: true })
    try {
      assert.deepEqual((await fresh.engine.migrationStatus()).map((m) => [m.name, m.applied_at]), names.map((name) => [name, null]))
      const seen: string[] = []
      const applied = await fresh.engine.migrate({ start: (name, i, count) => seen.push(`${i + 1}/${count} ${name}`), end: (name) => seen.push(`end ${name}`) })
      assert.deepEqual(applied, names)
      assert.deepEqual(seen, names.flatMap((name, i) => [`${i + 1}/${names.length} ${name}`, `end ${name}`]))
      const status = await fresh.engine.migrationStatus()
      assert.deepEqual(status.map((m) => m.name), names)
      assert.ok(status.every((m) => m.applied_at !== null && /^[0-9a-f]{64}$/.test(m.checksum)), JSON.stringify(status[0]))
      assert.deepEqual(await fresh.engine.migrate(), [])
    } finally {
      await fresh.close()
    }
  })

  s.test('the suite\'s database, migrated when opened: every migration applied', async (env) => {
    assert.deepEqual((await env.engine.migrationStatus()).filter((m) => m.applied_at === null), [])
  })
})

eachEngine('the hooks of db copy: snapshot(), findUnstorable(), refusesNul', (s) => {
  const count = async (db: Db) => Number((await db.selectFrom('tenants').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)

  s.test('snapshot(): every read of fn sees the database as it was at its first, whatever is written beside it', async (env) => {
    const other = await env.another()
    const before = await count(env.opened.db)
    const seen = await env.engine.snapshot(async (db) => {
      const first = await count(db)
      await other.db.insertInto('tenants').values({ id: `ten_snapshot_${++n}`, name: 'beside', created_at: new Date().toISOString() }).execute()
      return [first, await count(db)]
    })
    assert.deepEqual(seen, [before, before])
    assert.equal(await count(env.opened.db), before + 1)
  })

  s.test(`refusesNul is ${s.name === 'postgres'}: what the database does with U+0000 in text`, async (env) => {
    assert.equal(env.engine.refusesNul, s.name === 'postgres')
    const write = env.opened.db.insertInto('tenants').values({ id: `ten_nul_${++n}`, name: 'a\u0000b', created_at: new Date().toISOString() }).execute()
    if (env.engine.refusesNul) await assert.rejects(write)
    else await write
  })

  if (s.name === 'sqlite') {
    s.test('findUnstorable() names the first row PostgreSQL could not store: its table, key and column', async (env) => {
      await env.opened.db.deleteFrom('tenants').where('name', 'like', '%\u0000%').execute()
      assert.equal(await env.engine.findUnstorable(), undefined)
      const id = `ten_nul_${++n}`
      await env.opened.db.insertInto('tenants').values({ id, name: 'x\u0000y', created_at: new Date().toISOString() }).execute()
      const found = await env.engine.findUnstorable()
      assert.deepEqual([found?.table, found?.row, found?.column], ['tenants', id, 'name'])
    })
  } else {
    s.test('findUnstorable() finds nothing: PostgreSQL holds no U+0000 in text', async (env) => {
      assert.equal(await env.engine.findUnstorable(), undefined)
    })
  }
})

eachEngine('ping(), startBackground()', (s) => {
  s.test('ping() answers, also while a transaction holds the database', async (env) => {
    await env.engine.ping()
    await env.engine.withTx(async ({ tx }) => {
      await tx.selectFrom('tenants').select('id').execute()
      await env.engine.ping()
    })
  })

  const background = s.name === 'sqlite'
    ? 'startBackground() starts the WAL checkpoints, whose room() bulk deletes wait on, and stops them'
    : 'startBackground() has nothing to run beside the engine (no room() to wait on) and stops'
  s.test(background, async (env) => {
    const bg = env.engine.startBackground(createLogger('silent'))
    if (s.name === 'sqlite') {
      assert.equal(typeof bg.room, 'function')
      await bg.room!()
    } else assert.equal(bg.room, undefined)
    await bg.stop()
  })
})
