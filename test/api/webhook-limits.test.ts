import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { apiClient, runJson, startServe, migratedDb } from '../helpers/cli.ts'

const body = (i: number) => ({ url: `https://hooks.example.invalid/${i}`, events: ['*'], secret: 'limits-secret-0123' })

/** §9 Limits: at most --max-webhooks subscriptions per tenant; one more → 409 naming the limit. */
describe('--max-webhooks', () => {
  let app: TestApp
  before(async () => {
    app = await startTestApp({ maxWebhooks: 3 })
  })
  after(() => app.close())

  test('the limit counts the subscriptions that are not deleted, per tenant', async () => {
    const t = await app.tenant()
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const r = await t.request('POST', '/v1/webhooks', { body: body(i) })
      assert.equal(r.status, 201)
      ids.push(r.body.data.id)
    }
    assert.equal((await t.request('PATCH', `/v1/webhooks/${ids[0]}`, { body: { active: false } })).status, 200)
    const over = await t.request('POST', '/v1/webhooks', { body: body(9) })
    assert.equal(over.status, 409)
    assert.equal(over.body.error.code, 'conflict')
    assert.match(over.body.error.message, /\b3\b.*--max-webhooks/)
    // Another tenant has its own count.
    assert.equal((await (await app.tenant('Other')).request('POST', '/v1/webhooks', { body: body(1) })).status, 201)
    assert.equal((await t.request('DELETE', `/v1/webhooks/${ids[1]}`)).status, 200)
    assert.equal((await t.request('POST', '/v1/webhooks', { body: body(10) })).status, 201)
  })

  test('concurrent creates cannot pass the limit together', async () => {
    const t = await app.tenant('Racer')
    const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => t.request('POST', '/v1/webhooks', { body: body(i) }).then((r) => r.status)))
    assert.deepEqual(statuses.filter((s) => s === 201).length, 3)
    assert.deepEqual(statuses.filter((s) => s === 409).length, 7)
  })

  test('serve takes it from TRAVELOPS_MAX_WEBHOOKS, and the flag wins', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'travelops-limit-'))
    const db = await migratedDb(join(dir, 'l.db'))
    try {
      const tenant = await runJson(['tenants', 'create', '--name', 'L', '--db', db])
      const key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])).key
      for (const [args, allowed] of [[[], 1], [['--max-webhooks', '2'], 2]] as const) {
        const server = await startServe(['--db', db, '--log-level', 'silent', ...args], { TRAVELOPS_MAX_WEBHOOKS: '1' })
        try {
          const api = apiClient(server.url, key)
          const have = (await api('GET', '/v1/webhooks')).body.data.length as number
          for (let i = have; i < allowed; i++) assert.equal((await api('POST', '/v1/webhooks', body(i))).status, 201)
          assert.equal((await api('POST', '/v1/webhooks', body(99))).status, 409)
        } finally {
          await server.stop()
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
