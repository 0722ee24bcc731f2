import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { until } from '../helpers/cli.ts'
import { queryRows } from '../helpers/engine.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

/** §11 Statistics: GET /v1/webhooks/stats, one row per bucket, empty ones included, adding up to the attempts made. */
describe('GET /v1/webhooks/stats', () => {
  let app: TestApp
  let t: TestTenant
  let ok: Receiver
  let bad: Receiver
  let webhookOk: string
  let attempts: { total: number; succeeded: number; ofOk: number }
  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true, retryBaseMs: 50 })
    t = await app.tenant()
    ok = await startReceiver({ respond: () => ({ status: 200, delayMs: 5 }) })
    bad = await startReceiver({ respond: [500] })
    webhookOk = (await t.request('POST', '/v1/webhooks', { body: { url: ok.url, events: ['order.created'], secret: 'stats-secret-012345' } })).body.data.id
    await t.request('POST', '/v1/webhooks', { body: { url: bad.url, events: ['order.created'], secret: 'stats-secret-012345' } })
    for (let i = 0; i < 6; i++) await t.request('POST', '/v1/orders', { body: orderBody() })
    // Every delivery attempted until nothing is queued (the failing ones: 4 attempts each, 50 ms apart and up).
    const rows = await until('every retry made', async () => {
      const list = (await t.request('GET', '/v1/webhooks/deliveries?limit=100')).body.data as { webhook_id: string; status: string; attempts: number; next_retry_at: string | null }[]
      return list.length === 12 && list.every((d) => d.status !== 'pending' && d.next_retry_at === null) && list
    }, 20_000)
    attempts = {
      total: rows.reduce((s, d) => s + d.attempts, 0),
      succeeded: rows.filter((d) => d.status === 'delivered').length,
      ofOk: rows.filter((d) => d.webhook_id === webhookOk).reduce((s, d) => s + d.attempts, 0),
    }
  })
  after(async () => {
    await app.close()
    await ok.close()
    await bad.close()
  })

  test('hourly buckets over the last 24 h add up to every attempt made, with percentiles where there were attempts', async () => {
    const r = await t.request('GET', '/v1/webhooks/stats')
    assert.equal(r.status, 200)
    const rows = r.body.data as { start: string; attempts: number; succeeded: number; failed: number; p50_ms: number | null; p95_ms: number | null }[]
    assert.ok(rows.length === 24 || rows.length === 25, `${rows.length} buckets`)
    for (let i = 1; i < rows.length; i++) assert.equal(Date.parse(rows[i]!.start) - Date.parse(rows[i - 1]!.start), 3_600_000)
    assert.equal(rows.reduce((s, b) => s + b.attempts, 0), attempts.total)
    assert.equal(rows.reduce((s, b) => s + b.succeeded, 0), attempts.succeeded)
    assert.equal(rows.reduce((s, b) => s + b.failed, 0), attempts.total - attempts.succeeded)
    for (const b of rows) {
      assert.equal(b.succeeded + b.failed, b.attempts)
      if (b.attempts === 0) assert.deepEqual([b.p50_ms, b.p95_ms], [null, null])
      else assert.ok(b.p50_ms! <= b.p95_ms!)
    }
  })

  test('daily buckets of one subscription; another tenant sees none of it', async () => {
    const r = await t.request('GET', `/v1/webhooks/stats?bucket=day&webhook_id=${webhookOk}&since=2026-01-01T00:00:00Z&until=2099-01-01T00:00:00Z`.replace('2099-01-01', new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)))
    assert.equal(r.status, 200)
    const rows = r.body.data as { attempts: number; failed: number }[]
    assert.equal(rows.reduce((s, b) => s + b.attempts, 0), attempts.ofOk)
    assert.equal(rows.reduce((s, b) => s + b.failed, 0), 0)
    const other = await app.tenant('Other')
    const theirs = (await other.request('GET', '/v1/webhooks/stats')).body.data as { attempts: number }[]
    assert.equal(theirs.reduce((s, b) => s + b.attempts, 0), 0)
  })

  test('the worker recorded every attempt into attempt_stats too: its rows are the attempts summed per tenant, hour, subscription and duration', async () => {
    const sums = await queryRows<{ k: string; n: number; ok: number }>(app.dbFile, `SELECT a.tenant_id || ' ' || substr(a.at, 1, 13) || ' ' || d.webhook_id || ' ' || a.duration_ms AS k,
      count(*) AS n, sum(CASE WHEN a.response_code BETWEEN 200 AND 299 THEN 1 ELSE 0 END) AS ok
      FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id GROUP BY a.tenant_id, substr(a.at, 1, 13), d.webhook_id, a.duration_ms`)
    const rows = await queryRows<{ k: string; n: number; ok: number }>(app.dbFile,
      "SELECT tenant_id || ' ' || hour || ' ' || webhook_id || ' ' || duration_ms AS k, n, ok FROM attempt_stats")
    const asMap = (r: { k: string; n: number; ok: number }[]) => new Map(r.map((x) => [x.k, [Number(x.n), Number(x.ok)]]))
    assert.equal(sums.reduce((s, r) => s + Number(r.n), 0), attempts.total)
    assert.deepEqual(asMap(rows), asMap(sums))
  })

  test('bad ranges and parameters are 400s; the scope is webhooks:read', async () => {
    assert.equal((await t.request('GET', '/v1/webhooks/stats?since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z')).status, 400)
    assert.equal((await t.request('GET', '/v1/webhooks/stats?since=2020-01-01T00:00:00Z&until=2026-01-01T00:00:00Z')).status, 400)
    assert.equal((await t.request('GET', '/v1/webhooks/stats?bucket=minute')).status, 400)
    assert.equal((await t.request('GET', '/v1/webhooks/stats?webhook=wh_x')).status, 400)
    const k = await t.newKey({ scopes: ['orders:read'] })
    assert.equal((await t.request('GET', '/v1/webhooks/stats', { key: k.key })).status, 403)
    assert.equal((await t.request('PATCH', '/v1/webhooks/stats', { body: {} })).status, 405)
  })
})
