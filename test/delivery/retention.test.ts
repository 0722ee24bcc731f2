import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { queryRows } from '../helpers/engine.ts'
import { orderBody } from '../helpers/app.ts'
import { apiClient, runJson, startServe, until, migratedDb } from '../helpers/cli.ts'
import { startReceiver } from '../helpers/receiver.ts'

/** §11 Retention: finished deliveries and their events are deleted after --retention; queued work is kept. */
test('with --retention 3s a delivered record and its event are gone soon after; a queued retry and its event stay', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'travelops-retention-'))
  const db = await migratedDb(join(dir, 'r.db'))
  const ok = await startReceiver()
  const failing = await startReceiver({ respond: [500] })
  const tenant = await runJson(['tenants', 'create', '--name', 'R', '--db', db])
  const key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])).key
  // A retry base of an hour: the failing delivery stays queued throughout.
  const server = await startServe(['--db', db, '--allow-private-targets', '--log-level', 'warn', '--retention', '3s', '--retry-base', '3600000'])
  const count = async (sqlText: string) => (await queryRows<{ n: number }>(db, sqlText))[0]!.n
  try {
    const api = apiClient(server.url, key)
    await api('POST', '/v1/webhooks', { url: ok.url, events: ['order.created'], secret: 'retention-secret-01' })
    await api('POST', '/v1/webhooks', { url: failing.url, events: ['customer.created'], secret: 'retention-secret-01' })
    await api('POST', '/v1/orders', orderBody()) // → delivered
    await api('POST', '/v1/customers', { firstName: 'Q', lastName: 'Ueued', email: 'q@example.com' }) // → failed, retry queued
    assert.equal((await api('POST', '/v1/products', { name: 'No subscriber', price: 10, currency: 'EUR' })).status, 201) // an event nobody subscribed to
    const delivered = await until('the delivery delivered', async () => {
      const rows = (await api('GET', '/v1/webhooks/deliveries?event=order.created')).body.data
      return rows[0]?.status === 'delivered' && rows[0]
    })
    const queued = (await api('GET', '/v1/webhooks/deliveries?event=customer.created')).body.data[0]
    assert.equal(await count('SELECT count(*) AS n FROM events'), 3)
    await until('the delivered record gone', async () => (await api('GET', `/v1/webhooks/deliveries/${delivered.id}`)).status === 404, 15_000)
    await until('the events without deliveries gone', async () => await count('SELECT count(*) AS n FROM events') === 1, 5000)
    assert.equal(await count(`SELECT count(*) AS n FROM events WHERE name = 'customer.created'`), 1)
    assert.equal(await count('SELECT count(*) AS n FROM delivery_attempts WHERE delivery_id NOT IN (SELECT id FROM deliveries)'), 0)
    const still = await api('GET', `/v1/webhooks/deliveries/${queued.id}`)
    assert.equal(still.status, 200)
    assert.ok(still.body.data.next_retry_at)
  } finally {
    assert.equal(await server.stop(), 0)
    await ok.close()
    await failing.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
