import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type OpenDb } from '../../src/engine/port.ts'
import { openDatabase } from '../../src/engine/open.ts'
import pg from 'pg'
import { DEFAULT_CONFIG } from '../../src/config.ts'
import { pgDeliveryStore } from '../../src/engine/postgres/delivery-store.ts'
import { createKey } from '../../src/modules/keys/service.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { startServer } from '../../src/server.ts'
import { orderBody } from '../helpers/app.ts'
import { newPgDatabase } from '../helpers/engine.ts'
import { startReceiver } from '../helpers/receiver.ts'

// Due work a serve process cannot take itself is announced on PostgreSQL with NOTIFY for the
// other processes' workers; its own listener ignores its own announcements (each would cost a
// needless delivery cycle). Work it takes itself — what its own commits queue, while it has free
// slots — is announced to no one (test/delivery/worker-claims.test.ts has the worker's side).
describe('work announcements between serve processes', () => {
  let url: string
  let a: OpenDb
  let b: OpenDb
  const stops: (() => Promise<void>)[] = []
  before(async () => {
    url = await newPgDatabase()
    a = await openDatabase(url, { create: true, migrate: true })
    b = await openDatabase(url)
  })
  after(async () => {
    for (const stop of stops) await stop()
    await b?.close()
    await a?.close()
  })

  const listening = async (db: OpenDb['db']) => {
    const store = pgDeliveryStore(db, url)
    const woken = { count: 0 }
    stops.push(await store.listen!(() => woken.count++))
    return { store, woken }
  }
  const until = async (ok: () => boolean, ms: number, what: string) => {
    const t0 = Date.now()
    while (!ok()) {
      if (Date.now() - t0 > ms) throw new Error(`${what} within ${ms} ms`)
      await new Promise((r) => setTimeout(r, 5))
    }
  }

  test("another process's announcement wakes a worker; its own does not", async () => {
    const one = await listening(a.db)
    const two = await listening(b.db)
    one.store.announce()
    await until(() => two.woken.count === 1, 5_000, 'the other process was not woken')
    // Both listeners are sent each NOTIFY at its commit; give the announcer's own one more time
    // to arrive than the other's took, with a round trip through the server in between.
    await new Promise((r) => setTimeout(r, 200))
    await b.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute()
    assert.equal(one.woken.count, 0, 'the announcing process heard its own announcement')

    two.store.announce()
    await until(() => one.woken.count === 1, 5_000, 'the first process was not woken by the second')
    await new Promise((r) => setTimeout(r, 200))
    assert.equal(two.woken.count, 1, 'the second process heard its own announcement')
  })

  test('a serve process delivering what its own commits queued announces nothing', async () => {
    const rx = await startReceiver()
    const server = await startServer({ ...DEFAULT_CONFIG, db: url, port: 0, logLevel: 'silent', allowPrivateTargets: true })
    const listener = new pg.Client({ connectionString: url })
    const heard: string[] = []
    try {
      await listener.connect()
      listener.on('notification', (msg) => heard.push(msg.channel))
      await listener.query('LISTEN travelops_work')
      const tenant = await createTenant(server.deps.db, 'Quiet', new Date())
      const { key } = await createKey(server.deps.engine, { tenantId: tenant.id, scopes: ['*'] }, new Date())
      const post = (path: string, body: unknown) => fetch(server.url + path, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
      })
      assert.equal((await post('/v1/webhooks', { url: rx.url, events: ['order.created'], secret: 'whsec_quiet_0123456789abcdef' })).status, 201)
      for (let i = 0; i < 3; i++) assert.equal((await post('/v1/orders', orderBody())).status, 201)
      await rx.waitFor(3)
      // A NOTIFY is sent to every listener at its commit: a round trip later it has arrived.
      await new Promise((r) => setTimeout(r, 200))
      await listener.query('select 1')
      assert.deepEqual(heard, [])
    } finally {
      await listener.end().catch(() => {})
      await server.stop(1000)
      await rx.close()
    }
  })
})
