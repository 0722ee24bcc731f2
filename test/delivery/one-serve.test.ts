import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { orderBody } from '../helpers/app.ts'
import { apiClient, runCli, runJson, startServe, until, migratedDb } from '../helpers/cli.ts'
import { startReceiver } from '../helpers/receiver.ts'

// SQLite only (scripts/test.ts): one serve per file. On PostgreSQL any number of serve
// processes share a database (test/postgres/multi-process.test.ts).

describe('one serve per SQLite file', () => {
  let dir: string
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-once-'))
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  test('a second serve on the same SQLite file exits 1 at once, naming the file and the other process, and sends nothing', async () => {
    const db = await migratedDb(join(dir, 'twice.db'))
    const tenant = await runJson(['tenants', 'create', '--name', 'Twice', '--db', db])
    const key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])).key
    const rx = await startReceiver({ respond: () => ({ status: 200, delayMs: 300 }) })
    const args = ['--db', db, '--allow-private-targets', '--log-level', 'warn']
    const first = await startServe(args)
    try {
      const api = apiClient(first.url, key)
      await api('POST', '/v1/webhooks', { url: rx.url, events: ['order.created'], secret: 'graceful-secret-0123' })
      for (let i = 0; i < 5; i++) await api('POST', '/v1/orders', orderBody())
      const second = await runCli(['serve', '--port', '0', ...args])
      assert.equal(second.code, 1)
      assert.match(second.stderr, new RegExp(`${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*in use.*pid ${first.child.pid}`))
      assert.equal(second.stdout, '')
      await until('all five delivered', async () => {
        const r = (await api('GET', '/v1/webhooks/deliveries')).body.data as { status: string }[]
        return r.length === 5 && r.every((d) => d.status === 'delivered')
      })
      await new Promise((r) => setTimeout(r, 500))
      assert.equal(rx.requests.length, 5, 'nothing was sent twice')
    } finally {
      assert.equal(await first.stop(), 0)
      await rx.close()
    }
    // The first one's row is gone with it: the next start is not refused.
    const again = await startServe(args)
    assert.equal(await again.stop(), 0)
  })
})
