import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql, type Kysely, type KyselyPlugin, type PluginTransformResultArgs, type QueryResult, type UnknownRow } from 'kysely'
import type { Db } from '../../src/db/connect.ts'
import { countReplayable, replayDeliveries } from '../../src/delivery/requeue.ts'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { create } from '../helpers/billing.ts'
import { oldId, oldIdSql, series } from '../helpers/seed-sql.ts'

// A replay (API and CLI) queues a subscription's deliveries window by window: no statement takes
// more than 2,000 of them, and other requests run between two. One statement over all of them
// held every tenant's requests on SQLite for 4.9 s at 500,000 deliveries.

const N = 5_500

/** Counts the rows each UPDATE changed, as the database reports them. */
class UpdatedRows implements KyselyPlugin {
  readonly counts: number[] = []
  transformQuery: KyselyPlugin['transformQuery'] = (args) => args.node
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (args.result.numAffectedRows !== undefined) this.counts.push(Number(args.result.numAffectedRows))
    return args.result
  }
}

describe('replaying a subscription\'s deliveries in windows', () => {
  let app: TestApp
  let t: TestTenant
  let db: Kysely<any>
  let webhook: string
  before(async () => {
    // Retention off: the seeded deliveries finished in January, past the default 30 days.
    app = await startTestApp({ allowPrivateTargets: true, retentionMs: 0 })
    db = app.server.deps.db as unknown as Kysely<any>
    t = await app.tenant()
    // A subscription at an address nothing listens on; the deliveries below are queued for 2100, so none is attempted.
    webhook = (await create(t, '/v1/webhooks', { url: 'http://127.0.0.1:9/replay', events: ['payment.refunded'], secret: 'whsec_0123456789abcdef0123456789' })).id
    const event = oldId('evt', 1)
    await sql`INSERT INTO events (id, tenant_id, name, payload, created_at) VALUES (${event}, ${t.id}, 'payment.refunded', '{"data":{}}', '2026-01-01T00:00:00.000Z')`.execute(db)
    // Every third failed, the others delivered.
    await sql`INSERT INTO deliveries (id, tenant_id, webhook_id, event_id, event, status, attempts, retries, response_code, created_at, delivered_at, last_attempt_at, manual)
      SELECT ${oldIdSql(db, 'del')}, ${t.id}, ${webhook}, ${event}, 'payment.refunded', CASE WHEN i % 3 = 0 THEN 'failed' ELSE 'delivered' END, 1, 0, 200,
        '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 0
      FROM ${series(db, N)}`.execute(db)
  })
  after(() => app.close())

  test('counts and queues every delivery of the subscription, at most 2,000 per statement, with the event loop turning in between', async () => {
    const plugin = new UpdatedRows()
    const watched = db.withPlugin(plugin) as unknown as Db
    const filter = { tenantId: t.id, webhookId: webhook }
    assert.equal(await countReplayable(watched, filter), N)
    let turns = 0
    let done = false
    const turn = () => setImmediate(() => { if (!done) { turns++; turn() } })
    turn()
    // The worker is told nothing (the function alone, not the route): what is queued stays queued for the checks below.
    const queued = await replayDeliveries({ db: watched, engine: app.server.deps.engine }, filter, new Date('2100-01-01T00:00:00.000Z'))
    done = true
    assert.equal(queued, N)
    assert.deepEqual(plugin.counts, [2_000, 2_000, 1_500])
    assert.ok(turns >= plugin.counts.length - 1, `the event loop turned ${turns} times during ${plugin.counts.length} statements`)
    const rows = await sql<{ status: string; manual: number; n: number }>`SELECT status, manual, count(*) AS n FROM deliveries
      WHERE tenant_id = ${t.id} AND due_at = '2100-01-01T00:00:00.000Z' GROUP BY status, manual`.execute(db)
    assert.deepEqual(rows.rows.map((r) => ({ ...r, n: Number(r.n), manual: Number(r.manual) })).sort((a, b) => a.status.localeCompare(b.status)),
      [{ status: 'delivered', manual: 1, n: N - Math.floor(N / 3) }, { status: 'failed', manual: 1, n: Math.floor(N / 3) }])
  })

  test('the API\'s dry run and replay count the same, through the windows', async () => {
    const dry = await t.request('POST', '/v1/webhooks/deliveries/replay', { body: { webhook_id: webhook, status: 'delivered', dry_run: true } })
    assert.equal(dry.status, 200, dry.text)
    assert.deepEqual(dry.body.data, { queued: N - Math.floor(N / 3), dry_run: true })
    const failed = await t.request('POST', '/v1/webhooks/deliveries/replay', { body: { webhook_id: webhook, status: 'failed', dry_run: true } })
    assert.deepEqual(failed.body.data, { queued: Math.floor(N / 3), dry_run: true })
    const since = await t.request('POST', '/v1/webhooks/deliveries/replay', { body: { webhook_id: webhook, since: '2030-01-01T00:00:00Z', dry_run: true } })
    assert.deepEqual(since.body.data, { queued: 0, dry_run: true })
  })
})
