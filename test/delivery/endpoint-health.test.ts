import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { orderBody } from '../helpers/app.ts'
import { apiClient, runJson, startServe, until, type ServeProcess, migratedDb } from '../helpers/cli.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

const SECRET = 'health-secret-0123456'

/** §11 Endpoint health: failing for --disable-after → inactive (`failing`); 410 → at once (`gone`); PATCH active: true clears both. */
describe('endpoint health', () => {
  let dir: string
  let server: ServeProcess
  let api: ReturnType<typeof apiClient>
  const receivers: Receiver[] = []
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-health-'))
    const db = await migratedDb(join(dir, 'h.db'))
    const tenant = await runJson(['tenants', 'create', '--name', 'H', '--db', db])
    const key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])).key
    server = await startServe(['--db', db, '--allow-private-targets', '--log-level', 'warn', '--disable-after', '3s', '--retry-base', '100'])
    api = apiClient(server.url, key)
  })
  after(async () => {
    assert.equal(await server.stop(), 0)
    await Promise.all(receivers.map((r) => r.close()))
    rmSync(dir, { recursive: true, force: true })
  })
  const webhook = async (rx: Receiver) => {
    receivers.push(rx)
    const r = await api('POST', '/v1/webhooks', { url: rx.url, events: ['order.created'], secret: SECRET })
    assert.equal(r.status, 201)
    assert.equal(r.body.data.disabled_at, null)
    assert.equal(r.body.data.disabled_reason, null)
    return r.body.data.id as string
  }

  test('a subscription whose every attempt fails for --disable-after is disabled as failing, logged at warn; enabling clears it', async () => {
    const rx = await startReceiver({ respond: [500] })
    const id = await webhook(rx)
    const started = Date.now()
    const w = await until('the subscription disabled', async () => {
      await api('POST', '/v1/orders', orderBody())
      const got = (await api('GET', `/v1/webhooks/${id}`)).body.data
      await new Promise((r) => setTimeout(r, 300))
      return got.active === false && got
    }, 20_000)
    assert.ok(Date.now() - started >= 3000, 'not before --disable-after')
    assert.equal(w.disabled_reason, 'failing')
    assert.ok(Date.parse(w.disabled_at) >= started)
    const log = server.stderr().split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const off = log.find((l) => l.msg === 'webhook subscription disabled' && l.webhook_id === id)
    assert.equal(off?.level, 'warn')
    assert.equal(off?.reason, 'failing')
    const failed = log.filter((l) => l.msg === 'delivery attempt failed' && l.webhook_id === id)
    assert.ok(failed.length >= 2)
    assert.equal(failed[0].level, 'warn')
    assert.equal(failed[0].status, 500)
    assert.equal(failed[0].event, 'order.created')
    assert.ok(!server.stderr().includes(SECRET), 'the secret is never logged')
    // Nothing more is sent to it, and its queue was dropped.
    const seen = rx.requests.length
    await api('POST', '/v1/orders', orderBody())
    await new Promise((r) => setTimeout(r, 500))
    assert.equal(rx.requests.length, seen)
    const queued = (await api('GET', `/v1/webhooks/deliveries?webhook_id=${id}&limit=100`)).body.data.filter((d: { next_retry_at: string | null }) => d.next_retry_at !== null)
    assert.deepEqual(queued, [])

    const on = (await api('PATCH', `/v1/webhooks/${id}`, { active: true })).body.data
    assert.equal(on.active, true)
    assert.equal(on.disabled_at, null)
    assert.equal(on.disabled_reason, null)
  })

  test('a 410 Gone disables the subscription at once, as gone', async () => {
    const rx = await startReceiver({ respond: [410] })
    const id = await webhook(rx)
    await api('POST', '/v1/orders', orderBody())
    const w = await until('the subscription disabled', async () => {
      const got = (await api('GET', `/v1/webhooks/${id}`)).body.data
      return got.active === false && got
    })
    assert.equal(w.disabled_reason, 'gone')
    assert.equal(rx.requests.length, 1)
  })

  test('a success clears the failing run: a receiver that recovers is never disabled', async () => {
    let n = 0
    const rx = await startReceiver({ respond: () => ({ status: n++ % 2 === 0 ? 500 : 200 }) })
    const id = await webhook(rx)
    for (let i = 0; i < 12; i++) {
      await api('POST', '/v1/orders', orderBody())
      await new Promise((r) => setTimeout(r, 350))
    }
    assert.ok(rx.requests.length >= 12)
    assert.equal((await api('GET', `/v1/webhooks/${id}`)).body.data.active, true)
  })
})
