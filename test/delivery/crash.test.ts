import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { orderBody } from '../helpers/app.ts'
import { runJson, startServe, type ServeProcess, migratedDb } from '../helpers/cli.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

const N = 40

describe('at-least-once delivery across SIGKILL', () => {
  let dir: string
  let rx: Receiver
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-crash-'))
    // Slow answers keep deliveries in flight; the first try of every 7th event fails, so some
    // deliveries sit in the retry queue when the server is killed.
    const seen = new Set<string>()
    rx = await startReceiver({
      respond: (req) => {
        const id = String(req.headers['x-webhook-id'])
        const first = !seen.has(id)
        seen.add(id)
        return { status: first && seen.size % 7 === 3 ? 500 : 200, delayMs: 40 }
      },
    })
  })
  after(async () => {
    await rx.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('every event is delivered at least once after the server is killed mid-flight and restarted', async () => {
    const db = await migratedDb(join(dir, 'crash.db'))
    const tenant = await runJson(['tenants', 'create', '--name', 'Crash', '--db', db])
    const key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])).key
    const args = ['--db', db, '--allow-private-targets', '--retry-base', '300', '--delivery-timeout', '2000', '--log-level', 'warn']
    let server: ServeProcess = await startServe(args)
    const call = (url: string, method: string, path: string, body?: unknown) =>
      fetch(url + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined })
    const wh = await call(server.url, 'POST', '/v1/webhooks', { url: rx.url, events: ['order.created'], secret: 'crash-test-secret-123' })
    assert.equal(wh.status, 201)
    const orders: string[] = []
    for (let i = 0; i < N; i++) {
      const r = await call(server.url, 'POST', '/v1/orders', orderBody({ notes: `n${i}` }))
      assert.equal(r.status, 201)
      orders.push(((await r.json()) as { data: { id: string } }).data.id)
    }
    // Kill while deliveries are in flight or queued (40 ms each, 8 at a time per subscription).
    await server.kill()
    const beforeRestart = rx.requests.length
    assert.ok(beforeRestart < N + 6, `some work was left when killed (received ${beforeRestart})`)
    server = await startServe(args)
    try {
      const deadline = Date.now() + 20_000
      const delivered = () => new Set(rx.requests.filter((r) => r.at > 0).map((r) => JSON.parse(r.body).data.id as string))
      while (Date.now() < deadline && orders.some((id) => !delivered().has(id))) await new Promise((r) => setTimeout(r, 100))
      const got = delivered()
      assert.deepEqual(orders.filter((id) => !got.has(id)), [], 'no order event lost')
      // And the records say so: every delivery ends delivered.
      let records: { status: string }[] = []
      for (let i = 0; i < 200; i++) {
        const r = await call(server.url, 'GET', `/v1/webhooks/deliveries?limit=100`)
        records = ((await r.json()) as { data: { status: string }[] }).data
        if (records.length === N && records.every((d) => d.status === 'delivered')) break
        await new Promise((r) => setTimeout(r, 100))
      }
      assert.equal(records.length, N, 'one delivery per event')
      const notDelivered = records.filter((d) => d.status !== 'delivered') as { id?: string }[]
      const logs = await Promise.all(notDelivered.map(async (d) => (await (await call(server.url, 'GET', `/v1/webhooks/deliveries/${d.id}`)).json())))
      assert.deepEqual(notDelivered, [], JSON.stringify(logs))
    } finally {
      assert.equal(await server.stop(), 0)
    }
  })
})
