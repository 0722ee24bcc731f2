import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { orderBody } from '../helpers/app.ts'
import { apiClient, runCli, runJson, startServe, until, migratedDb } from '../helpers/cli.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

describe('graceful shutdown', () => {
  let dir: string
  let rx: Receiver
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-stop-'))
    rx = await startReceiver({ respond: () => ({ status: 200, delayMs: 1200 }) })
  })
  after(async () => {
    await rx.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('SIGTERM lets an in-flight delivery finish and record, then exits 0; nothing is sent twice', async () => {
    const db = await migratedDb(join(dir, 'stop.db'))
    const tenant = await runJson(['tenants', 'create', '--name', 'Stop', '--db', db])
    const key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])).key
    const args = ['--db', db, '--allow-private-targets', '--log-level', 'warn']
    const call = (base: string, method: string, path: string, body?: unknown) =>
      fetch(base + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined })
    let server = await startServe(args)
    assert.equal((await call(server.url, 'POST', '/v1/webhooks', { url: rx.url, events: ['order.created'], secret: 'graceful-secret-0123' })).status, 201)
    assert.equal((await call(server.url, 'POST', '/v1/orders', orderBody())).status, 201)
    await rx.waitFor(1) // the receiver holds its answer for 1.2 s
    const started = Date.now()
    const code = await server.stop()
    assert.equal(code, 0)
    assert.ok(Date.now() - started >= 900, 'it waited for the receiver to answer')
    server = await startServe(args)
    try {
      const r = await call(server.url, 'GET', '/v1/webhooks/deliveries')
      const [d] = ((await r.json()) as { data: { status: string; attempts: number }[] }).data
      assert.equal(d!.status, 'delivered')
      assert.equal(d!.attempts, 1)
      await new Promise((res) => setTimeout(res, 1500))
      assert.equal(rx.requests.length, 1, 'not sent again after the restart')
    } finally {
      await server.stop()
    }
  })

  test('SIGTERM with receivers that answer after 20 s or never: exit 0 within 10 s; after restart every event is delivered', async () => {
    const db = await migratedDb(join(dir, 'slow.db'))
    const tenant = await runJson(['tenants', 'create', '--name', 'Slow', '--db', db])
    const key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])).key
    let phase: 'slow' | 'healthy' = 'slow'
    const late = await startReceiver({ respond: () => (phase === 'slow' ? { status: 200, delayMs: 20_000 } : { status: 200 }) })
    const never = await startReceiver({ respond: () => (phase === 'slow' ? { hang: true } : { status: 200 }) })
    const args = ['--db', db, '--allow-private-targets', '--log-level', 'warn']
    try {
      let server = await startServe(args)
      let api = apiClient(server.url, key)
      for (const rx of [late, never]) {
        assert.equal((await api('POST', '/v1/webhooks', { url: rx.url, events: ['order.created'], secret: 'graceful-secret-0123' })).status, 201)
      }
      assert.equal((await api('POST', '/v1/orders', orderBody())).status, 201)
      await late.waitFor(1)
      await never.waitFor(1)
      const started = Date.now()
      assert.equal(await server.stop(), 0)
      const took = Date.now() - started
      assert.ok(took <= 10_000, `exit took ${took} ms`)

      phase = 'healthy'
      server = await startServe(args)
      api = apiClient(server.url, key)
      try {
        const rows = await until('both deliveries delivered', async () => {
          const r = (await api('GET', '/v1/webhooks/deliveries')).body.data as { id: string; status: string }[]
          return r.length === 2 && r.every((d) => d.status === 'delivered') && r
        })
        for (const d of rows) {
          const log = (await api('GET', `/v1/webhooks/deliveries/${d.id}`)).body.data.attempt_log as { response_code: number | null }[]
          // The aborted attempts got no answer and are not attempts; the one after the restart is.
          assert.deepEqual(log.map((a) => a.response_code), [200])
        }
        assert.equal(late.requests.length, 2)
        assert.equal(never.requests.length, 2)
      } finally {
        await server.stop()
      }
    } finally {
      await late.close()
      await never.close()
    }
  })
})
