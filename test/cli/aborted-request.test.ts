import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { runJson, startServe, until, migratedDb } from '../helpers/cli.ts'

/** §9 Aborted requests: a client that goes away mid-request is logged at info with status 499, never as an error or a 500. */
test('a client that sends half its body and disconnects is logged as 499 at info', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'travelops-abort-'))
  const db = await migratedDb(join(dir, 'a.db'))
  const tenant = await runJson(['tenants', 'create', '--name', 'A', '--db', db])
  const key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])).key
  const server = await startServe(['--db', db, '--log-level', 'info'])
  try {
    const { port } = new URL(server.url)
    const s = connect(Number(port), '127.0.0.1')
    await new Promise<void>((r) => s.once('connect', () => r()))
    s.write(`POST /v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"firstName":"Half`)
    await new Promise((r) => setTimeout(r, 200))
    s.destroy()
    const line = await until('the request log line', () => server.stderr().split('\n').find((l) => l.includes('"path":"/v1/customers"')))
    const entry = JSON.parse(line)
    assert.equal(entry.level, 'info')
    assert.equal(entry.status, 499)
    assert.ok(!/"level":"error"/.test(server.stderr()), server.stderr())
    assert.ok(!/"status":500/.test(server.stderr()))
  } finally {
    assert.equal(await server.stop(), 0)
    rmSync(dir, { recursive: true, force: true })
  }
})
