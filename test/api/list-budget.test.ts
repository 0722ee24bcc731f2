import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql, type Kysely } from 'kysely'
import { SCAN_BUDGET } from '../../src/db/page-rows.ts'
import { startTestApp, orderBody, type TestApp, type TestTenant } from '../helpers/app.ts'
import { create, invoiceBody } from '../helpers/billing.ts'
import { oldId as idOf, oldIdSql, series } from '../helpers/seed-sql.ts'

// A list filtered by what no index serves in id order (a time range, a delivery's status, two
// filters at once) looks at no more than SCAN_BUDGET of the tenant's records per page: a tenant
// with more records than that gets pages that end early (even empty) with `has_more: true`, and
// paging on finds every record once. Before, one such page read the tenant's whole table while
// every other request waited (SQLite answers synchronously): 0.3–0.8 s at a million orders.

const N = SCAN_BUDGET + 20_000
const OLD = '2025-06-01T00:00:00.000Z'

async function pageThrough(t: TestTenant, path: string, limit = 20): Promise<{ ids: string[]; pages: { n: number; has_more: boolean }[] }> {
  const ids: string[] = []
  const pages: { n: number; has_more: boolean }[] = []
  let cursor: string | null = null
  do {
    const r = await t.request('GET', `${path}${path.includes('?') ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)
    assert.equal(r.status, 200, r.text)
    assert.equal(r.body.has_more, r.body.next_cursor !== null)
    ids.push(...r.body.data.map((x: { id: string }) => x.id))
    pages.push({ n: r.body.data.length, has_more: r.body.has_more })
    cursor = r.body.next_cursor
    assert.ok(pages.length < 50, 'paging ends')
  } while (cursor)
  return { ids, pages }
}

describe('lists whose filters no index serves: at most SCAN_BUDGET records per page', () => {
  let app: TestApp
  let big: TestTenant
  let other: TestTenant
  let db: Kysely<any>
  let recent: string[]
  before(async () => {
    // Retention off: the seeded deliveries finished in 2025, and the pruner would delete them
    // while the tests page through them (it did once its steps no longer waited on fsync).
    app = await startTestApp({ allowPrivateTargets: true, retentionMs: 0 })
    db = app.server.deps.db as unknown as Kysely<any>
    big = await app.tenant('Big')
    other = await app.tenant('Other')
    const template = (await create(big, '/v1/orders', orderBody())).id as string
    recent = [template, (await create(big, '/v1/orders', orderBody())).id as string]
    await create(other, '/v1/orders', orderBody())
    // N older orders of Big, copies of the first; the three oldest created in 2025.
    await sql`INSERT INTO orders (id, tenant_id, order_number, status, customer_id, customer, items, total, currency, travel_date, notes, metadata, created_at, updated_at)
      SELECT ${oldIdSql(db, 'ord')}, tenant_id, 'ORD-' || (1000000 + i), status, customer_id, customer, items, total, currency, travel_date, notes, metadata,
        CASE WHEN i <= 3 THEN ${OLD} ELSE created_at END, updated_at
      FROM orders, ${series(db, N)} WHERE orders.id = ${template}`.execute(db)
    // N finished deliveries of one event to a subscription that receives nothing else; the three oldest failed.
    const webhook = await create(big, '/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['payment.refunded'], secret: 'whsec_0123456789abcdef0123456789' })
    const event = idOf('evt', 1)
    await sql`INSERT INTO events (id, tenant_id, name, payload, created_at) VALUES (${event}, ${big.id}, 'payment.refunded', ${JSON.stringify({ id: event, event: 'payment.refunded', data: {} })}, ${OLD})`.execute(db)
    await sql`INSERT INTO deliveries (id, tenant_id, webhook_id, event_id, event, status, attempts, retries, response_code, created_at, delivered_at, last_attempt_at, manual)
      SELECT ${oldIdSql(db, 'del')}, ${big.id}, ${webhook.id}, ${event}, 'payment.refunded', CASE WHEN i <= 3 THEN 'failed' ELSE 'delivered' END, 1, 0,
        CASE WHEN i <= 3 THEN 500 ELSE 200 END, ${OLD}, ${OLD}, ${OLD}, 0
      FROM ${series(db, N)}`.execute(db)
  })
  after(() => app.close())

  test('an order time range that matches nothing: a first page that stops early, then the rest', async () => {
    const { ids, pages } = await pageThrough(big, '/v1/orders?createdAfter=2100-01-01T00:00:00.000Z')
    assert.deepEqual(ids, [])
    assert.deepEqual(pages, [{ n: 0, has_more: true }, { n: 0, has_more: false }])
  })

  test('an order time range that matches only the oldest: each found once, newest first, across early pages', async () => {
    const { ids, pages } = await pageThrough(big, '/v1/orders?createdBefore=2025-12-31T00:00:00.000Z', 2)
    assert.deepEqual(ids, [3, 2, 1].map((i) => idOf('ord', i)))
    assert.equal(pages[0]!.n, 0)
    assert.equal(pages[0]!.has_more, true)
  })

  test('a time range and a status that match the newest: full pages at once', async () => {
    const r = await big.request('GET', '/v1/orders?createdAfter=2026-01-01T00:00:00.000Z&status=pending&limit=100')
    assert.equal(r.status, 200, r.text)
    assert.equal(r.body.data.length, 100)
    assert.deepEqual(r.body.data.slice(0, 2).map((o: { id: string }) => o.id), [...recent].reverse())
    assert.equal(r.body.has_more, true)
  })

  test('a customer and a time range: windows count the customer\'s orders, so a page ends when they do', async () => {
    const customer = (await create(big, '/v1/customers', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' })).id as string
    const mine = [(await create(big, '/v1/orders', orderBody({ customerId: customer }))).id, (await create(big, '/v1/orders', orderBody({ customerId: customer }))).id]
    const r = await big.request('GET', `/v1/orders?customerId=${customer}&createdAfter=2000-01-01T00:00:00.000Z`)
    assert.deepEqual(r.body.data.map((o: { id: string }) => o.id), [...mine].reverse())
    assert.equal(r.body.has_more, false)
    const none = await big.request('GET', '/v1/orders?status=pending&customerId=cus_00000000-0000-7000-8000-000000000000')
    assert.deepEqual([none.body.data.length, none.body.has_more], [0, false])
  })

  test('deliveries by status: the three failed, oldest of all, found across early pages', async () => {
    const { ids, pages } = await pageThrough(big, '/v1/webhooks/deliveries?status=failed')
    assert.deepEqual(ids, [3, 2, 1].map((i) => idOf('del', i)))
    assert.deepEqual(pages.map((p) => p.has_more), [true, false])
    assert.deepEqual(pages.map((p) => p.n), [0, 3])
  })

  test('a list served by one index still reads its page at once, however old the records', async () => {
    const r = await big.request('GET', '/v1/orders?status=pending&limit=100')
    assert.equal(r.body.data.length, 100)
    const d = await big.request('GET', `/v1/webhooks/deliveries?limit=100&cursor=${Buffer.from(JSON.stringify({ after: idOf('del', 50) })).toString('base64url')}`)
    assert.deepEqual(d.body.data.map((x: { id: string }) => x.id), Array.from({ length: 49 }, (_, k) => idOf('del', 49 - k)))
    assert.equal(d.body.has_more, false)
  })

  test('another tenant\'s lists are its own', async () => {
    const r = await other.request('GET', '/v1/orders?createdAfter=2000-01-01T00:00:00.000Z')
    assert.equal(r.body.data.length, 1)
    assert.equal(r.body.has_more, false)
  })
})

describe('two filters on a table of tenantTable() read in windows', () => {
  let app: TestApp
  before(async () => { app = await startTestApp() })
  after(() => app.close())

  test('invoices by status and order across windows: every match once, newest first, pages full', async () => {
    const t = await app.tenant()
    const db = app.server.deps.db as unknown as Kysely<any>
    const order = (await create(t, '/v1/orders', orderBody())).id as string
    const template = (await create(t, '/v1/invoices', invoiceBody({ orderId: order }))).id as string
    // 3,500 older invoices of the order, every seventh paid: windows of 1,000 and 2,000 and what is left.
    await sql`INSERT INTO invoices (id, tenant_id, invoice_number, order_id, customer_id, status, lines, total, amount_paid, currency, due_date, paid_at, metadata, created_at, updated_at)
      SELECT ${oldIdSql(db, 'inv')}, tenant_id, 'INV-' || (1000000 + i), order_id, customer_id, CASE WHEN i % 7 = 0 THEN 'paid' ELSE 'open' END, lines, total, amount_paid,
        currency, due_date, paid_at, metadata, created_at, updated_at
      FROM invoices, ${series(db, 3_500)} WHERE invoices.id = ${template}`.execute(db)
    const want = Array.from({ length: 500 }, (_, k) => idOf('inv', 3_500 - 7 * k))
    const { ids, pages } = await pageThrough(t, `/v1/invoices?status=paid&orderId=${order}`, 100)
    assert.deepEqual(ids, want)
    assert.deepEqual(pages.map((p) => p.n), [100, 100, 100, 100, 100])
    const open = await t.request('GET', `/v1/invoices?status=open&orderId=${order}&limit=3`)
    assert.deepEqual(open.body.data.map((x: { id: string }) => x.id), [template, idOf('inv', 3_499), idOf('inv', 3_498)])
  })
})
