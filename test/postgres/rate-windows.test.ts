import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely'
import { type Db } from '../../src/db/connect.ts'
import { type OpenDb } from '../../src/engine/port.ts'
import { openDatabase } from '../../src/engine/open.ts'
import { SharedRateLimiter } from '../../src/engine/postgres/rate-windows.ts'
import { createKey } from '../../src/modules/keys/service.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { queryRows, newPgDatabase } from '../helpers/engine.ts'

// The shared hourly windows of several processes (CONTRACT §10), each process reserving blocks
// of requests rather than taking a round trip per request (http/rate-limit.ts): never more than
// the limit allowed across processes, exact near the limit, refused requests counted, and far
// from the limit far fewer statements than requests.
describe('SharedRateLimiter on PostgreSQL', () => {
  let url: string
  let one: OpenDb
  let two: OpenDb
  let tenantId: string
  before(async () => {
    url = await newPgDatabase()
    one = await openDatabase(url, { create: true, migrate: true })
    two = await openDatabase(url)
    tenantId = (await createTenant(one.db, 'Limited', new Date())).id
  })
  after(async () => {
    await two?.close()
    await one?.close()
  })

  const newKey = async () => (await createKey(one.engine, { tenantId, scopes: ['*'] }, new Date())).id
  const shared = async (keyId: string) => Number((await queryRows<{ count: number }>(url, 'SELECT count FROM rate_windows WHERE key_id = ?', keyId))[0]?.count ?? 0)
  /** The database with every statement counted. */
  const counted = (db: Db) => {
    const plugin: KyselyPlugin & { n: number } = {
      n: 0,
      transformQuery(args: PluginTransformQueryArgs): RootOperationNode { this.n++; return args.node },
      async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> { return args.result },
    }
    return { db: db.withPlugin(plugin), plugin }
  }
  const allowed = (ds: { allowed: boolean }[]) => ds.filter((d) => d.allowed).length
  // The limiter's clock: real time moved to the middle of an hour, so that no test's requests
  // fall into two hourly windows when the suite runs across a full hour (it did once in CI).
  const HOUR_MS = 3_600_000
  const started = Date.now()
  const base = Math.floor(started / HOUR_MS) * HOUR_MS + HOUR_MS / 2
  const clock = () => base + (Date.now() - started)

  test('two processes, 150 concurrent requests each on a limit of 100: exactly 100 allowed', async () => {
    const keyId = await newKey()
    const [a, b] = [new SharedRateLimiter(one.db), new SharedRateLimiter(two.db)]
    const now = clock()
    const ds = await Promise.all(Array.from({ length: 300 }, (_, i) => (i % 2 ? a : b).hit(keyId, 100, now, tenantId)))
    assert.equal(allowed(ds), 100)
    assert.ok(await shared(keyId) >= 300 - 100, 'the refused requests are counted too')
  })

  test('near the limit every request is counted on its own: a limit of 10 over alternating processes', async () => {
    const keyId = await newKey()
    const [a, b] = [new SharedRateLimiter(one.db), new SharedRateLimiter(two.db)]
    const ds = []
    for (let n = 0; n < 13; n++) ds.push(await (n % 2 ? a : b).hit(keyId, 10, clock(), tenantId))
    assert.deepEqual(ds.map((d) => d.allowed), [...Array(10).fill(true), false, false, false])
    assert.deepEqual(ds.slice(0, 10).map((d) => d.remaining), [9, 8, 7, 6, 5, 4, 3, 2, 1, 0])
    assert.equal(await shared(keyId), 13)
  })

  test('far from the limit, a burst of 2,000 requests takes far fewer statements, and holds back at most one block', async () => {
    const keyId = await newKey()
    const { db, plugin } = counted(one.db)
    const limiter = new SharedRateLimiter(db)
    let ok = 0
    for (let burst = 0; burst < 20; burst++) {
      const ds = await Promise.all(Array.from({ length: 100 }, () => limiter.hit(keyId, 1_000_000, clock(), tenantId)))
      ok += allowed(ds)
    }
    assert.equal(ok, 2000)
    assert.ok(plugin.n <= 60, `${plugin.n} statements for 2,000 requests`)
    const count = await shared(keyId)
    assert.ok(count >= 2000 && count <= 2000 + 256, `shared count ${count}: every request, plus at most one block not used yet`)
  })

  test('units a process holds unused go back after a second, the rest at close(): a key whose traffic moves to another process gets its whole limit', async () => {
    const keyId = await newKey()
    const [a, b] = [new SharedRateLimiter(one.db), new SharedRateLimiter(two.db)]
    for (let burst = 0; burst < 6; burst++) await Promise.all(Array.from({ length: 50 }, () => a.hit(keyId, 1000, clock(), tenantId)))
    assert.ok(await shared(keyId) > 300, 'a holds units it has not used (else this test proves nothing)')
    await new Promise((r) => setTimeout(r, 1_300))
    assert.equal(await shared(keyId), 300, 'after a second unused they are given back')
    const ds = []
    for (let n = 0; n < 750; n++) ds.push(await b.hit(keyId, 1000, clock(), tenantId))
    assert.equal(allowed(ds), 700, 'the other process gets all that is left')
    assert.deepEqual(ds.slice(698, 702).map((d) => d.allowed), [true, true, false, false])

    const other = await newKey()
    await Promise.all(Array.from({ length: 100 }, () => b.hit(other, 100_000, clock(), tenantId)))
    await Promise.all(Array.from({ length: 100 }, () => b.hit(other, 100_000, clock(), tenantId)))
    assert.ok(await shared(other) > 200, 'b holds units it has not used')
    await b.close()
    assert.equal(await shared(other), 200, 'close() gives them back at once')
    await a.close()
  })

  test('a key used rarely reserves one request at a time', async () => {
    const keyId = await newKey()
    const limiter = new SharedRateLimiter(one.db)
    const t0 = clock()
    for (let n = 0; n < 3; n++) assert.equal((await limiter.hit(keyId, 1_000_000, t0 + n * 2_000, tenantId)).allowed, true)
    assert.equal(await shared(keyId), 3)
  })
})
