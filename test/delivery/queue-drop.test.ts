import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql, type Kysely } from 'kysely'
import { DROP_BATCH } from '../../src/db/drop-queue.ts'
import { startTestApp, orderBody, type TestApp, type TestTenant } from '../helpers/app.ts'
import { create } from '../helpers/billing.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'
import { series } from '../helpers/seed-sql.ts'
import { statementSizes } from '../helpers/statement-sizes.ts'

// A subscription's queue is dropped (deactivated, deleted, disabled by endpoint health) in
// statements of at most DROP_BATCH deliveries, so that on SQLite other requests are served
// between two: in one statement, a failing receiver's backlog of 100,000 retries held every
// tenant's requests for 250–270 ms. How big each statement was is watched the engine's own way
// (test/helpers/statement-sizes.ts).

const N = 3 * DROP_BATCH + 7
const LATER = '2099-01-01T00:00:00.000Z'

describe('a subscription\'s queue is dropped in bounded statements', () => {
  let app: TestApp
  let t: TestTenant
  let db: Kysely<any>
  let pg: boolean
  let rx: Receiver
  let seeded = 0
  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true, retentionMs: 0 })
    db = app.server.deps.db as unknown as Kysely<any>
    pg = app.server.deps.engine.name === 'postgres'
    t = await app.tenant('Dropper')
    rx = await startReceiver({ respond: [410] })
  })
  after(async () => {
    await rx.close()
    await app.close()
  })

  /** A subscription with `n` deliveries queued for a retry far ahead (and `due` due now), none sent yet. */
  async function queue(url: string, n: number, due = 0): Promise<string> {
    // The order first: its event has no delivery to this subscription.
    await create(t, '/v1/orders', orderBody())
    const event = ((await db.selectFrom('events').select('id').where('tenant_id', '=', t.id).where('name', '=', 'order.created')
      .orderBy('id', 'desc').executeTakeFirstOrThrow()) as { id: string }).id
    const webhook = (await create(t, '/v1/webhooks', { url, events: ['payment.received'], secret: 'whsec_0123456789abcdef0123456789' })).id as string
    const k = seeded++
    const id = pg ? sql`'del_00000000-0000-7000-8${sql.raw(String(k))}00-' || lpad(to_hex(i), 12, '0')` : sql`'del_00000000-0000-7000-8${sql.raw(String(k))}00-' || printf('%012x', i)`
    await sql`INSERT INTO deliveries (id, tenant_id, webhook_id, event_id, event, status, attempts, retries, created_at, manual, due_at, next_retry_at)
      SELECT ${id}, ${t.id}, ${webhook}, ${event}, 'order.created', 'pending', 0, 0, ${new Date().toISOString()}, 0,
        CASE WHEN i <= ${due} THEN ${new Date().toISOString()} ELSE ${LATER} END, NULL
      FROM ${series(db, n)}`.execute(db)
    return webhook
  }

  const queued = async (webhook: string) => Number(((await sql<{ n: number }>`select count(*) as n from deliveries where webhook_id = ${webhook} and due_at is not null`
    .execute(db)).rows[0]!).n)

  /** The statements that drop `webhook`'s queue (test/helpers/statement-sizes.ts); `reactivate`: the subscription is made active again right after the first. */
  const watch = (webhook: string, reactivate = false) => statementSizes(app, {
    count: `SELECT count(*) FROM deliveries WHERE webhook_id = '${webhook}' AND due_at IS NOT NULL`,
    table: 'deliveries',
    event: 'UPDATE',
    pgCount: `SELECT count(*) FROM old_rows o JOIN new_rows n USING (id) WHERE o.webhook_id = '${webhook}' AND o.due_at IS NOT NULL AND n.due_at IS NULL`,
    onFirst: reactivate ? `UPDATE webhooks SET active = 1 WHERE id = '${webhook}'` : undefined,
  })

  test('PATCH active: false answers once the whole queue is dropped, DROP_BATCH deliveries a statement at most', async () => {
    const webhook = await queue('http://127.0.0.1:9/patched', N)
    const other = await queue('http://127.0.0.1:9/kept', 10)
    const w = await watch(webhook)
    const r = await t.request('PATCH', `/v1/webhooks/${webhook}`, { body: { active: false } })
    assert.equal(r.status, 200, r.text)
    assert.equal(await queued(webhook), 0, 'nothing left queued when PATCH answers')
    const steps = await w.stop()
    assert.equal(steps.reduce((a, b) => a + b, 0), N)
    assert.ok(steps.length >= 4 && Math.max(...steps) <= DROP_BATCH, `deliveries dropped per statement: ${steps}`)
    const states = await sql<{ status: string; n: number }>`select status, count(*) as n from deliveries where webhook_id = ${webhook} group by status`.execute(db)
    assert.deepEqual(states.rows.map((s) => [s.status, Number(s.n)]), [['failed', N]], 'never attempted: failed')
    assert.equal(await queued(other), 10, 'another subscription\'s queue is left alone')
  })

  test('a subscription made active again while its queue is being dropped keeps what is still queued', async () => {
    const webhook = await queue('http://127.0.0.1:9/revived', N)
    const w = await watch(webhook, true)
    const r = await t.request('PATCH', `/v1/webhooks/${webhook}`, { body: { active: false } })
    assert.equal(r.status, 200, r.text)
    const steps = await w.stop()
    assert.deepEqual(steps, [DROP_BATCH], 'the first statement, then none')
    assert.equal(await queued(webhook), N - DROP_BATCH)
  })

  test('a subscription the claim finds inactive (made so behind the API\'s back) has its due deliveries dropped, DROP_BATCH a cycle at most', async () => {
    const n = DROP_BATCH + 5
    const webhook = await queue('http://127.0.0.1:9/behind', n)
    const w = await watch(webhook)
    await db.updateTable('webhooks').set({ active: 0 }).where('id', '=', webhook).execute()
    await db.updateTable('deliveries').set({ due_at: new Date().toISOString() }).where('webhook_id', '=', webhook).execute() // due now, inactive
    for (let i = 0; (await queued(webhook)) > 0; i++) {
      assert.ok(i < 200, `queue dropped (${await queued(webhook)} left)`)
      await new Promise((r) => setTimeout(r, 50))
    }
    const steps = await w.stop()
    assert.equal(steps.reduce((a, b) => a + b, 0), n)
    assert.ok(steps.length >= 2 && Math.max(...steps) <= DROP_BATCH, `deliveries dropped per statement: ${steps}`)
    const r = await t.request('GET', `/v1/webhooks/deliveries?webhook_id=${webhook}&limit=5`)
    assert.deepEqual(r.body.data.map((d: { status: string; attempts: number }) => [d.status, d.attempts]), Array(5).fill(['failed', 0]), 'none sent')
  })

  test('endpoint health: a subscription disabled by a 410 has its whole queue dropped, DROP_BATCH deliveries a statement at most', async () => {
    const webhook = await queue(rx.url, N, 1)
    const w = await watch(webhook)
    // The one due delivery is sent (the worker's poll finds it), answered 410: the cycle that
    // records it disables the subscription and drops the first batch; the worker the rest.
    for (let i = 0; (await queued(webhook)) > 0; i++) {
      assert.ok(i < 200, `queue dropped (${await queued(webhook)} left)`)
      await new Promise((r) => setTimeout(r, 50))
    }
    const sub = (await t.request('GET', `/v1/webhooks/${webhook}`)).body.data
    assert.equal(sub.active, false)
    assert.equal(sub.disabled_reason, 'gone')
    const steps = await w.stop()
    assert.equal(steps.reduce((a, b) => a + b, 0), N)
    assert.ok(steps.length >= 4 && Math.max(...steps) <= DROP_BATCH, `deliveries dropped per statement: ${steps}`)
  })
})
