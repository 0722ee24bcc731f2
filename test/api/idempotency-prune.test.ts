import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql, type Kysely } from 'kysely'
import { IDEMPOTENCY_PRUNE_BATCH, IDEMPOTENCY_PRUNE_PARTS, pruneIdempotencyKeys } from '../../src/http/idempotency.ts'
import { startTestApp, orderBody, type TestApp, type TestTenant } from '../helpers/app.ts'
import { series } from '../helpers/seed-sql.ts'
import { statementSizes } from '../helpers/statement-sizes.ts'

// Idempotency records are kept 24 h (CONTRACT §2); serve prunes older ones hourly, in statements
// of at most IDEMPOTENCY_PRUNE_BATCH records, so that on SQLite other requests are served
// between two: the hour of records a busy server prunes at once (360,000 at 100 keyed requests a
// second) held every tenant's requests for seconds in one statement.

const OLD = 2 * IDEMPOTENCY_PRUNE_BATCH + 3

describe('idempotency records older than 24 h are pruned in bounded statements', () => {
  let app: TestApp
  let t: TestTenant
  let db: Kysely<any>
  before(async () => {
    app = await startTestApp()
    db = app.server.deps.db as unknown as Kysely<any>
    t = await app.tenant('Keyed')
  })
  after(() => app.close())

  const count = async () => Number((await sql<{ n: number }>`select count(*) as n from idempotency_keys`.execute(db)).rows[0]!.n)

  test('records past 24 h go, oldest first, at most IDEMPOTENCY_PRUNE_BATCH a statement; younger ones stay and still replay', async () => {
    const headers = { 'idempotency-key': 'kept-order-1' }
    const first = await t.request('POST', '/v1/orders', { body: orderBody(), headers })
    assert.equal(first.status, 201)
    const now = Date.now()
    const at = (hours: number) => new Date(now - hours * 3_600_000).toISOString()
    await sql`INSERT INTO idempotency_keys (key_id, idem_key, tenant_id, method, path, body_hash, status, response, created_at)
      SELECT ${t.keyId}, 'old-' || i, ${t.id}, 'POST', '/v1/orders', 'h', 201, '{"data":{}}', ${at(25)} FROM ${series(db, OLD)}`.execute(db)
    await sql`INSERT INTO idempotency_keys (key_id, idem_key, tenant_id, method, path, body_hash, status, response, created_at)
      VALUES (${t.keyId}, 'young', ${t.id}, 'POST', '/v1/orders', 'h', 201, '{"data":{}}', ${at(23)})`.execute(db)
    assert.equal(await count(), OLD + 2)

    await pruneIdempotencyKeys(app.server.deps, { stopping: Promise.resolve() })
    assert.equal(await count(), OLD + 2, 'a prune told to stop deletes nothing more')

    const sizes = await statementSizes(app, {
      count: 'SELECT count(*) FROM idempotency_keys', table: 'idempotency_keys', event: 'DELETE', pgCount: 'SELECT count(*) FROM old_rows',
    })
    await pruneIdempotencyKeys(app.server.deps)
    const steps = await sizes.stop()
    assert.equal(steps.reduce((a, b) => a + b, 0), OLD)
    assert.ok(steps.length >= 3 && Math.max(...steps) <= IDEMPOTENCY_PRUNE_BATCH, `records deleted per statement: ${steps}`)
    const left = await sql<{ idem_key: string }>`select idem_key from idempotency_keys order by idem_key`.execute(db)
    assert.deepEqual(left.rows.map((r) => r.idem_key), ['kept-order-1', 'young'])
    const again = await t.request('POST', '/v1/orders', { body: orderBody(), headers })
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    assert.equal(again.text, first.text)
  })

  test('parts of a streamed answer go once 25 h old, at most IDEMPOTENCY_PRUNE_PARTS a statement; younger ones stay', async () => {
    const now = Date.now()
    const at = (hours: number) => new Date(now - hours * 3_600_000).toISOString()
    const parts = async () => (await sql<{ idem_key: string; part: number }>`select idem_key, part from idempotency_parts order by idem_key, part`.execute(db)).rows
      .map((r) => `${r.idem_key}/${Number(r.part)}`)
    const old = 3 * IDEMPOTENCY_PRUNE_PARTS + 1
    // A record's parts (its record already gone: pruned at 24 h), a claim that never finished, and parts of 24.5 h, kept an hour longer than their record for a replay still reading them.
    await sql`INSERT INTO idempotency_parts (key_id, idem_key, tenant_id, created_at, part, body)
      SELECT ${t.keyId}, CASE WHEN i % 2 = 0 THEN 'streamed' ELSE 'abandoned' END, ${t.id}, ${at(26)}, i, 'x' FROM ${series(db, old)}`.execute(db)
    await sql`INSERT INTO idempotency_parts (key_id, idem_key, tenant_id, created_at, part, body)
      VALUES (${t.keyId}, 'replaying', ${t.id}, ${at(24.5)}, 0, 'y'), (${t.keyId}, 'replaying', ${t.id}, ${at(24.5)}, 1, 'z')`.execute(db)

    const sizes = await statementSizes(app, {
      count: 'SELECT count(*) FROM idempotency_parts', table: 'idempotency_parts', event: 'DELETE', pgCount: 'SELECT count(*) FROM old_rows',
    })
    await pruneIdempotencyKeys(app.server.deps)
    const steps = await sizes.stop()
    assert.equal(steps.reduce((a, b) => a + b, 0), old)
    assert.ok(steps.length >= 4 && Math.max(...steps) <= IDEMPOTENCY_PRUNE_PARTS, `parts deleted per statement: ${steps}`)
    assert.deepEqual(await parts(), ['replaying/0', 'replaying/1'])
  })
})
