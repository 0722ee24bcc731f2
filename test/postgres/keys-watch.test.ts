import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import pg from 'pg'
import { KEYS_CHANNEL } from '../../src/engine/postgres/common.ts'
import type { OpenDb } from '../../src/engine/port.ts'
import { openDatabase } from '../../src/engine/open.ts'
import { createKey, revokeKey, touchKey } from '../../src/modules/keys/service.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { newPgDatabase } from '../helpers/engine.ts'

// The key cache's yardstick on PostgreSQL (engine/postgres/keys-watch.ts): another process's key write is
// heard (LISTEN) as soon as it commits; this process's own write counts before its answer; a
// write that announces nothing still ages out within 500 ms; and nothing is cached while the
// listening connection is down.
describe('keysVersion on PostgreSQL', () => {
  let url: string
  let serve: OpenDb
  let cli: OpenDb
  let tenantId: string
  before(async () => {
    url = await newPgDatabase()
    serve = await openDatabase(url, { create: true, migrate: true })
    cli = await openDatabase(url)
    tenantId = (await createTenant(cli.db, 'Watched', new Date())).id
  })
  after(async () => {
    await cli?.close()
    await serve?.close()
  })

  const listening = async (o: OpenDb) => {
    const until = Date.now() + 5_000
    while (o.engine.keysVersion() === null) {
      if (Date.now() > until) throw new Error('the key watch did not start listening within 5 s')
      await new Promise((r) => setTimeout(r, 10))
    }
    return o.engine.keysVersion()!
  }
  /** Resolves with the first version different from `from` (polled every 2 ms), or throws after `ms`. */
  const changedFrom = async (from: string, ms: number) => {
    const t0 = Date.now()
    while (serve.engine.keysVersion() === from) {
      if (Date.now() - t0 > ms) throw new Error(`keysVersion still ${from} after ${ms} ms`)
      await new Promise((r) => setTimeout(r, 2))
    }
    return Date.now() - t0
  }
  /** Waits for the start of a fresh 500 ms slot, so only a notification can change the version in the next ~400 ms. */
  const freshSlot = async () => {
    const v = await listening(serve)
    await changedFrom(v, 1_000)
    return serve.engine.keysVersion()!
  }

  test('a key created or revoked by another process is heard at once (well within the 500 ms backstop)', async () => {
    let v = await freshSlot()
    const k = await createKey(cli.engine, { tenantId, scopes: ['*'] }, new Date())
    assert.ok((await changedFrom(v, 1_000)) < 300, 'a creation is announced')
    v = await freshSlot()
    await revokeKey(cli.engine, k.id, new Date())
    assert.ok((await changedFrom(v, 1_000)) < 300, 'a revocation is announced')
  })

  test("this process's own revocation counts before revokeKey() returns", async () => {
    const k = await createKey(serve.engine, { tenantId, scopes: ['*'] }, new Date())
    const v = await freshSlot()
    await revokeKey(serve.engine, k.id, new Date())
    assert.notEqual(serve.engine.keysVersion(), v)
  })

  test('a last_used_at touch announces nothing', async () => {
    const k = await createKey(cli.engine, { tenantId, scopes: ['*'] }, new Date())
    // A listener of the test's own on the channel, then the touch, then a marker of the test's own
    // on the same channel: notifications arrive in commit order, so whatever the touch announced
    // would arrive before the marker.
    const listener = new pg.Client({ connectionString: url })
    await listener.connect()
    try {
      const heard: string[] = []
      const marked = new Promise<void>((resolve) => listener.on('notification', (n) => {
        heard.push(n.payload ?? '')
        if (n.payload === 'marker') resolve()
      }))
      await listener.query(`listen ${KEYS_CHANNEL}`)
      await touchKey(cli.db, k.id, new Date())
      await sql`select pg_notify(${KEYS_CHANNEL}, 'marker')`.execute(cli.db)
      await marked
      assert.deepEqual(heard, ['marker'], 'nothing announced before the marker')
    } finally {
      await listener.end()
    }
  })

  test('a hand-written UPDATE that announces nothing still ages out within 500 ms', async () => {
    const k = await createKey(cli.engine, { tenantId, scopes: ['*'] }, new Date())
    const v = await freshSlot()
    await sql`update api_keys set revoked_at = ${new Date().toISOString()} where id = ${k.id}`.execute(cli.db)
    assert.ok((await changedFrom(v, 600)) <= 550)
  })

  test('while the listening connection is lost nothing is cached; it comes back on its own', async () => {
    const before = await listening(serve)
    const killed = await sql<{ n: number }>`select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where application_name = 'travelops keys' and datname = current_database()`.execute(cli.db)
    assert.equal(killed.rows[0]?.n, 1, 'one listening connection (only the process that asked for a version opened one)')
    const t0 = Date.now()
    while (serve.engine.keysVersion() !== null) {
      if (Date.now() - t0 > 2_000) throw new Error('still caching 2 s after the listening connection was lost')
      await new Promise((r) => setTimeout(r, 5))
    }
    const after = await listening(serve)
    assert.notEqual(after.split('.')[0], before.split('.')[0], 'a new epoch after reconnecting: anything may have changed meanwhile')
  })
})
