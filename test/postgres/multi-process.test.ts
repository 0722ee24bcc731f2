import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { orderBody } from '../helpers/app.ts'
import { invoiceBody } from '../helpers/billing.ts'
import { apiClient, runJson, startServe, until, type ServeProcess } from '../helpers/cli.ts'
import { newPgDatabase } from '../helpers/engine.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

// CONTRACT §10: several `serve` processes on one PostgreSQL database, behind any load balancer
// (here: requests dealt round-robin by the test). Real processes, real receivers on 127.0.0.1.

const SECRET = 'whsec_multi_0123456789abcdef'
const FLAGS = ['--allow-private-targets', '--retry-base', '200', '--delivery-timeout', '5000', '--log-level', 'warn']

describe('three serve processes on one PostgreSQL database', () => {
  let url: string
  let servers: ServeProcess[] = []
  let tenantId: string
  let key: string
  const apis = () => servers.map((s) => apiClient(s.url, key))
  /** Request n goes to process n mod N. */
  const dealt = (n: number) => apis()[n % servers.length]!

  before(async () => {
    assert.ok(process.env.TRAVELOPS_TEST_PG_URL, 'the PostgreSQL half needs TRAVELOPS_TEST_PG_URL (npm test starts a server)')
    url = await newPgDatabase()
    // Migrations raced: three processes start together on an empty database.
    servers = await Promise.all([0, 1, 2].map(() => startServe(['--db', url, ...FLAGS])))
    tenantId = (await runJson(['tenants', 'create', '--name', 'Many Processes', '--db', url])).id
    // Over a thousand requests in this file (the polls included): more than the default limit of 1000 an hour.
    key = (await runJson(['keys', 'create', '--tenant', tenantId, '--rate-limit', '100000', '--db', url])).key
  })

  after(async () => {
    await Promise.all(servers.map((s) => s.stop().catch(() => {})))
  })

  test('migrations raced by three processes starting together are applied once each', async () => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      const rows = (await client.query('select name, count(*)::int as n from schema_migrations group by name order by name')).rows
      assert.ok(rows.length >= 9)
      assert.ok(rows.every((r) => r.n === 1), JSON.stringify(rows))
    } finally {
      await client.end()
    }
  })

  test('500 orders spread across the processes: every order.created arrives once, signed, whichever process committed it', async () => {
    const rx = await startReceiver()
    try {
      const webhook = await dealt(0)('POST', '/v1/webhooks', { url: `${rx.url}/orders`, events: ['order.created'], secret: SECRET })
      assert.equal(webhook.status, 201)
      const ids: string[] = []
      for (let batch = 0; batch < 25; batch++) {
        const made = await Promise.all(Array.from({ length: 20 }, (_, i) => dealt(batch * 20 + i)('POST', '/v1/orders', orderBody())))
        for (const r of made) {
          assert.equal(r.status, 201, JSON.stringify(r.body))
          ids.push(r.body.data.id)
        }
      }
      assert.equal(new Set(ids).size, 500)
      await rx.waitFor(500, 60_000)
      await new Promise((r) => setTimeout(r, 500)) // anything sent twice would arrive by now
      for (const r of rx.requests) assert.equal(r.headers['x-webhook-signature'], createHmac('sha256', SECRET).update(r.body).digest('hex'))
      const seen = rx.requests.map((r) => JSON.parse(r.body).data.id as string)
      assert.equal(seen.length, 500, 'none twice')
      assert.deepEqual([...new Set(seen)].sort(), [...ids].sort())
      const orderNumbers = (await Promise.all(ids.slice(0, 50).map((id, n) => dealt(n)('GET', `/v1/orders/${id}`)))).map((r) => r.body.data.orderNumber)
      assert.equal(new Set(orderNumbers).size, 50, 'order numbers stay unique across processes')
      await dealt(1)('DELETE', `/v1/webhooks/${webhook.body.data.id}`)
    } finally {
      await rx.close()
    }
  })

  test('a key limited to 10 requests an hour gets 429 on its 11th, whichever process answers', async () => {
    const limited = (await runJson(['keys', 'create', '--tenant', tenantId, '--rate-limit', '10', '--db', url])).key
    const statuses: number[] = []
    for (let n = 0; n < 12; n++) statuses.push((await apiClient(servers[n % 3]!.url, limited)('GET', '/v1/orders?limit=1')).status)
    assert.deepEqual(statuses, [...Array(10).fill(200), 429, 429])
  })

  test('keys revoke from the CLI: 401 at every process within 1 s', async () => {
    const k = await runJson(['keys', 'create', '--tenant', tenantId, '--db', url])
    for (const s of servers) assert.equal((await apiClient(s.url, k.key)('GET', '/v1/orders?limit=1')).status, 200)
    await runJson(['keys', 'revoke', k.id, '--db', url, '--yes'])
    const revokedAt = Date.now()
    const statuses = await Promise.all(servers.map((s) => until('401 after revoke', async () => {
      const r = await apiClient(s.url, k.key)('GET', '/v1/orders?limit=1')
      return r.status === 401 && Date.now()
    }, 5_000)))
    for (const at of statuses) assert.ok(at - revokedAt <= 1_000, `seen ${at - revokedAt} ms after the revocation`)
  })

  test('50 parallel confirms, over-payments and duplicate slugs across processes: one winner, the others 409 (or 422), never a 500', async () => {
    const order = (await dealt(0)('POST', '/v1/orders', orderBody())).body.data
    const confirms = await Promise.all(Array.from({ length: 50 }, (_, n) => dealt(n)('POST', `/v1/orders/${order.id}/confirm`)))
    const byStatus = (rs: { status: number }[]) => rs.reduce<Record<number, number>>((a, r) => ((a[r.status] = (a[r.status] ?? 0) + 1), a), {})
    assert.deepEqual(byStatus(confirms), { 200: 1, 409: 49 }, JSON.stringify(confirms.filter((r) => r.status !== 409 && r.status !== 200)))

    const invoice = (await dealt(1)('POST', '/v1/invoices', invoiceBody({ lines: [{ description: 'Trip', quantity: 1, unitPrice: 100 }] }))).body.data
    const pays = await Promise.all(Array.from({ length: 50 }, (_, n) => dealt(n)('POST', '/v1/payments', { invoiceId: invoice.id, amount: 30, currency: 'EUR', method: 'card' })))
    const paid = pays.filter((r) => r.status === 201)
    assert.ok(pays.every((r) => [201, 409, 422].includes(r.status)), JSON.stringify(byStatus(pays)))
    assert.equal(paid.length, 3, 'three payments of 30 fit a total of 100; a fourth would over-pay')
    const after = (await dealt(2)('GET', `/v1/invoices/${invoice.id}`)).body.data
    assert.equal(after.amountPaid, 90)

    const slugs = await Promise.all(Array.from({ length: 50 }, (_, n) => dealt(n)('POST', '/v1/content/pages', { slug: 'same-slug', title: 'Same' })))
    assert.deepEqual(byStatus(slugs), { 201: 1, 409: 49 })
  })

  test('SIGKILL of a process with deliveries in flight: every delivery arrives, through the others, within the lease time', async () => {
    const held: (() => void)[] = []
    let holding = true
    const rx: Receiver = await startReceiver({
      respond: async () => {
        if (holding) await new Promise<void>((r) => held.push(r))
        return { status: 204 }
      },
    })
    try {
      const victim = servers[0]!
      const webhook = await dealt(0)('POST', '/v1/webhooks', { url: `${rx.url}/slow`, events: ['order.created'], secret: SECRET })
      const ids: string[] = []
      for (let n = 0; n < 30; n++) ids.push((await dealt(n)('POST', '/v1/orders', orderBody())).body.data.id)
      await until('attempts in flight', () => rx.requests.length >= 10, 10_000)
      await victim.kill()
      const killedAt = Date.now()
      holding = false
      for (const release of held.splice(0)) release()
      servers = servers.slice(1)
      await until('every order.created delivered', async () => {
        const got = new Set(rx.requests.map((r) => JSON.parse(r.body).data.id as string))
        return ids.every((id) => got.has(id))
      }, 40_000)
      assert.ok(Date.now() - killedAt < 15_000 + 5_000 + 30_000, 'within the lease, the delivery timeout and the contract\'s 30 s')
      const records = (await dealt(0)('GET', `/v1/webhooks/deliveries?webhook_id=${webhook.body.data.id}&limit=100`)).body.data as any[]
      assert.equal(records.length, 30)
      await until('every record delivered', async () => {
        const list = (await dealt(1)('GET', `/v1/webhooks/deliveries?webhook_id=${webhook.body.data.id}&limit=100`)).body.data as any[]
        return list.every((d) => d.status === 'delivered')
      }, 20_000)
    } finally {
      holding = false
      for (const release of held.splice(0)) release()
      await rx.close()
    }
  })
})
