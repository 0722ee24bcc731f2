import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { openDatabase } from '../../src/engine/open.ts'
import { COPIED_TABLES } from '../../src/engine/copy.ts'
import { migrate } from '../../src/engine/sqlite/migrate.ts'
import { openSqlite } from '../../src/engine/sqlite/sqlite.ts'
import { orderBody } from '../helpers/app.ts'
import { invoiceBody, itineraryBody, paymentBody } from '../helpers/billing.ts'
import { apiClient, runCli, runJson, startServe, until } from '../helpers/cli.ts'
import { newPgDatabase } from '../helpers/engine.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

// CONTRACT §10: `travelops db copy` SQLite → PostgreSQL → SQLite leaves every table's rows as
// they were, and the copy serves the same answers.

const SECRET = 'whsec_copy_0123456789abcdef'

/** Every row of every copied table, in primary-key order, as plain JSON values. */
async function dump(target: string): Promise<Record<string, unknown[]>> {
  const opened = await openDatabase(target)
  try {
    const out: Record<string, unknown[]> = {}
    for (const t of COPIED_TABLES) {
      let q = opened.db.selectFrom(t.name).selectAll()
      for (const k of t.key) q = q.orderBy(sql.ref(k))
      // A column one engine keeps for itself (events.tx) is no row content: the copy leaves it to the target.
      out[t.name] = (await q.execute()).map((r) => Object.fromEntries(Object.entries(r).filter(([c]) => !t.omit?.includes(c))))
    }
    return out
  } finally {
    await opened.close()
  }
}

describe('travelops db copy', () => {
  let dir: string
  let original: string
  let key: string
  let rx: Receiver
  let answers: Record<string, unknown>
  const paths: string[] = []

  before(async () => {
    assert.ok(process.env.TRAVELOPS_TEST_PG_URL, 'the PostgreSQL half needs TRAVELOPS_TEST_PG_URL (npm test starts a server)')
    dir = mkdtempSync(join(tmpdir(), 'travelops-copy-'))
    original = join(dir, 'original.db')
    const sqlite = openSqlite(original)
    migrate(sqlite)
    sqlite.close()
    const tenant = await runJson(['tenants', 'create', '--name', 'Copy Tours', '--db', original])
    await runJson(['tenants', 'create', '--name', 'Other <b>Tenant</b>', '--db', original])
    const created = await runJson(['keys', 'create', '--tenant', tenant.id, '--name', 'k', '--db', original])
    key = created.key
    rx = await startReceiver()
    const server = await startServe(['--db', original, '--allow-private-targets', '--log-level', 'warn'])
    try {
      const call = apiClient(server.url, key)
      const api = async (method: string, path: string, body?: unknown) => {
        const r = await call(method, path, body)
        assert.ok(r.status < 300, `${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`)
        return r
      }
      assert.equal((await api('POST', '/v1/webhooks', { url: `${rx.url}/in`, events: ['*'], secret: SECRET, headers: { 'X-Env': 'copy' } })).status, 201)
      const customer = (await api('POST', '/v1/customers', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', metadata: { vip: 'yes' } })).body.data
      const order = (await api('POST', '/v1/orders', orderBody({ customerId: customer.id, customer: undefined }))).body.data
      assert.equal((await api('POST', `/v1/orders/${order.id}/confirm`)).status, 200)
      await api('POST', '/v1/itineraries', itineraryBody({ orderId: order.id }))
      const invoice = (await api('POST', '/v1/invoices', invoiceBody({ orderId: order.id }))).body.data
      assert.equal((await api('POST', '/v1/payments', paymentBody({ invoiceId: invoice.id, amount: 299 }))).status, 201)
      await api('POST', '/v1/products', { name: 'Fjord cruise', code: 'FJ-1', price: 149.5, currency: 'EUR' })
      await api('POST', '/v1/content/pages', { slug: 'about', title: 'Über uns ✓', data: { lang: 'de' } })
      await api('POST', '/v1/orders', { ...orderBody(), items: [{ description: 'Big', quantity: 1, unitPrice: 999999999.99 }] })
      await until('every delivery attempted', async () => {
        const list = (await api('GET', '/v1/webhooks/deliveries?limit=100')).body.data as any[]
        return list.length > 0 && list.every((d) => d.attempts > 0) && list
      })
      paths.push('/v1/orders', `/v1/orders/${order.id}`, '/v1/customers', '/v1/invoices', '/v1/payments', '/v1/webhooks/deliveries?limit=100', '/v1/content/pages', '/v1/products', '/v1/keys')
      // The stats of a fixed range (the default one moves with the clock), answered from the copied attempt_stats.
      const day = (ms: number) => new Date(Date.now() + ms).toISOString().slice(0, 10)
      paths.push(`/v1/webhooks/stats?bucket=day&since=${day(-86_400_000)}T00:00:00Z&until=${day(86_400_000)}T00:00:00Z`)
      answers = {}
      for (const p of paths) answers[p] = (await api('GET', p)).body
    } finally {
      await server.stop()
    }
    // Idempotency records and a streamed answer's parts, more than one batch of each (50 and 4 rows
    // a read: their rows are as large as answers), the parts' four-column key walked across batches.
    const db = openSqlite(original)
    const at = (i: number) => new Date(Date.UTC(2026, 10, 27, 12, 0, i)).toISOString()
    const record = db.prepare(`INSERT INTO idempotency_keys (key_id, idem_key, tenant_id, method, path, body_hash, status, response, created_at, parts)
      VALUES (?, ?, ?, 'POST', '/v1/orders', 'h', 201, ?, ?, ?)`)
    for (let i = 0; i < 120; i++) record.run(created.id, `copied-${i}`, tenant.id, i % 2 ? null : `{"data":{"n":${i}}}`, at(i), i % 2 ? 3 : null)
    const part = db.prepare('INSERT INTO idempotency_parts (key_id, idem_key, tenant_id, created_at, part, body) VALUES (?, ?, ?, ?, ?, ?)')
    for (let i = 0; i < 11; i++) part.run(created.id, `copied-${i % 3}`, tenant.id, at(i % 2), i, `part ${i} ✓ ${'x'.repeat(i * 100)}`)
    db.close()
  })

  after(async () => {
    await rx?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('SQLite → PostgreSQL → SQLite: every table\'s rows identical; the copies serve the same answers; a non-empty target is refused', async () => {
    const pg = await newPgDatabase()
    const there = await runJson(['db', 'copy', '--from', original, '--to', pg])
    assert.ok(there.rows > 20, JSON.stringify(there))
    const back = join(dir, 'back.db')
    const again = await runJson(['db', 'copy', '--from', pg, '--to', back])
    assert.deepEqual(again.tables, there.tables)

    const before = await dump(original)
    assert.deepEqual(await dump(pg), before, 'PostgreSQL holds exactly the rows of the SQLite file')
    assert.deepEqual(await dump(back), before, 'and the round trip ends where it started')
    assert.ok(before.deliveries!.length > 0 && before.delivery_attempts!.length > 0 && before.counters!.length > 0)
    assert.ok(before.attempt_stats!.length > 0, 'the hourly sums of the attempts (stats) are copied too')
    assert.equal(before.idempotency_parts!.length, 11)
    assert.ok(before.idempotency_keys!.length >= 120)

    for (const target of [pg, back]) {
      const server = await startServe(['--db', target, '--log-level', 'warn'])
      try {
        const api = apiClient(server.url, key)
        for (const p of paths) assert.deepEqual((await api('GET', p)).body, answers[p], `${target}: GET ${p}`)
      } finally {
        await server.stop()
      }
    }

    const served = await dump(pg) // serving it used the key (last_used_at) and counted its requests
    const refused = await runCli(['db', 'copy', '--from', original, '--to', pg])
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /is not empty \(table tenants has rows\).*nothing was written/)
    assert.deepEqual(await dump(pg), served, 'the refused copy wrote nothing')
  })

  test('usage: the same database twice is exit 2; a missing source is exit 1 and creates nothing', async () => {
    assert.equal((await runCli(['db', 'copy', '--from', original, '--to', original])).code, 2)
    const r = await runCli(['db', 'copy', '--from', join(dir, 'nope.db'), '--to', join(dir, 'never.db')])
    assert.equal(r.code, 1)
    assert.match(r.stderr, /no database at/)
    const { existsSync } = await import('node:fs')
    assert.equal(existsSync(join(dir, 'never.db')), false)
  })
})
