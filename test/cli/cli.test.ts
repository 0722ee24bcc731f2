import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { databaseText } from '../helpers/engine.ts'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { BIN, runCli, runJson, startServe, migratedDb } from '../helpers/cli.ts'

describe('the travelops CLI, spawned as a process', () => {
  let dir: string
  let db: string
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-cli-'))
    db = await migratedDb(join(dir, 'cli.db'))
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  test('--version and --help exit 0; unknown commands and options exit 2; failures exit 1', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
    const v = await runCli(['--version'])
    assert.equal(v.code, 0)
    assert.equal(v.stdout.trim(), pkg.version)
    for (const args of [['--help'], ['keys', '--help'], ['keys', 'create', '--help'], ['serve', '--help']]) {
      const h = await runCli(args)
      assert.equal(h.code, 0, args.join(' '))
      assert.match(h.stdout, /Usage:/)
    }
    assert.match((await runCli(['serve', '--help'])).stdout, /TRAVELOPS_RETRY_BASE_MS/, 'env twins are listed in --help')
    assert.equal((await runCli(['frobnicate'])).code, 2)
    for (const args of [[], ['keys'], ['deliveries'], ['help', 'frobnicate']]) {
      const r = await runCli(args)
      assert.equal(r.code, 2, `travelops ${args.join(' ')}: a missing or unknown command is a usage error`)
      assert.match(r.stderr, /Usage:/)
      assert.equal(r.stdout, '')
    }
    assert.equal((await runCli(['help', 'keys'])).code, 0)
    assert.equal((await runCli(['tenants', 'list', '--frob'])).code, 2)
    assert.equal((await runCli(['tenants', 'create', '--db', db])).code, 2, 'missing --name')
    assert.equal((await runCli(['keys', 'create', '--db', db, '--tenant', 'ten_01a2006f-8a5a-7042-87ba-09d34df5a262'])).code, 1, 'unknown tenant')
    assert.equal((await runCli(['keys', 'revoke', 'key_01a2006f-8a5a-7042-87ba-09d34df5a262', '--db', db])).code, 1)
    assert.equal((await runCli(['serve', '--port', 'abc', '--db', db])).code, 2, 'invalid flag value')
  })

  test('a reader that stops early (`| head`) ends a command quietly, with the status of a pipe closed under it (141)', async () => {
    await runJson(['tenants', 'create', '--db', db, '--name', 'Piped Tours'])
    for (const args of [['--help'], ['keys', '--help'], ['tenants', 'list', '--db', db], ['tenants', 'list', '--db', db, '--json']]) {
      const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
      child.stdout.destroy() // the reader is gone before the first line is written
      let stderr = ''
      child.stderr.on('data', (d) => (stderr += d))
      const [code] = await once(child, 'close')
      assert.equal(stderr, '', `travelops ${args.join(' ')}: nothing on stderr`)
      assert.equal(code, 141, args.join(' '))
    }
  })

  test('tenants and keys: --json prints one document; keys list never shows secrets; TRAVELOPS_DB is honoured', async () => {
    const tenant = await runJson(['tenants', 'create', '--name', 'Nordic Trails', '--db', db])
    assert.match(tenant.id, /^ten_/)
    assert.equal(tenant.name, 'Nordic Trails')
    const viaEnv = await runJson(['tenants', 'list'], { env: { TRAVELOPS_DB: db } })
    assert.ok(viaEnv.some((t: { id: string }) => t.id === tenant.id))
    const key = await runJson(['keys', 'create', '--tenant', tenant.id, '--name', 'website', '--scopes', 'orders:read,webhooks:*,events:read', '--rate-limit', '50', '--expires-in', '90d', '--db', db])
    assert.match(key.key, /^tok_[A-Za-z0-9_-]{32}$/)
    assert.deepEqual(key.scopes, ['orders:read', 'webhooks:*', 'events:read'])
    assert.equal(key.rate_limit, 50)
    assert.equal(Date.parse(key.expires_at) - Date.parse(key.created_at), 90 * 864e5, '--expires-in 90d: exactly 90 days after created_at')
    const plain = await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])
    assert.deepEqual(plain.scopes, ['*'])
    assert.equal(plain.rate_limit, null)
    const list = await runCli(['keys', 'list', '--tenant', tenant.id, '--db', db, '--json'])
    assert.equal(list.code, 0)
    assert.ok(!list.stdout.includes(key.key) && !list.stdout.includes(plain.key), 'no secrets')
    const keys = JSON.parse(list.stdout)
    assert.equal(keys.length, 2)
    assert.ok(keys.every((k: { prefix: string }) => k.prefix.length < 16))
    const human = await runCli(['keys', 'list', '--tenant', tenant.id, '--db', db])
    assert.ok(!human.stdout.includes(key.key))
    assert.equal((await runCli(['keys', 'create', '--tenant', tenant.id, '--scopes', 'orders:delete', '--db', db])).code, 2)
    const readOnly = await runCli(['keys', 'create', '--tenant', tenant.id, '--scopes', 'events:write', '--db', db])
    assert.equal(readOnly.code, 2, 'events are read only: events:write names nothing')
    assert.match(readOnly.stderr, /events:read only/)
    const malformed = await runCli(['keys', 'list', '--tenant', 'nope', '--db', db, '--json'])
    assert.equal(malformed.code, 2, 'a malformed tenant id is a usage error, like keys create and deliveries list')
    assert.equal(malformed.stdout, '')
    const unknown = await runCli(['keys', 'list', '--tenant', 'ten_01a2006f-8a5a-7042-87ba-09d34df5a262', '--db', db, '--json'])
    assert.equal(unknown.code, 1, 'a tenant that does not exist is not found')
    assert.match(unknown.stderr, /no tenant/)
    const dbBytes = await databaseText(db)
    assert.ok(!dbBytes.includes(key.key), 'the database holds no key in clear')
  })

  test('revoking a key makes it 401 at once on a running server', async () => {
    const tenant = await runJson(['tenants', 'create', '--name', 'Revokers', '--db', db])
    const key = await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])
    const server = await startServe(['--db', db, '--log-level', 'info'])
    try {
      const get = () => fetch(`${server.url}/v1/orders`, { headers: { authorization: `Bearer ${key.key}` } })
      assert.equal((await get()).status, 200)
      const revoked = await runJson(['keys', 'revoke', key.id, '--db', db, '--yes'])
      assert.equal(revoked.key.id, key.id)
      assert.ok(revoked.key.revoked_at)
      const r = await get()
      assert.equal(r.status, 401)
      assert.ok(!server.stderr().includes(key.key), 'the key never reaches the log')
      assert.match(server.stderr(), /"msg":"request"/)
    } finally {
      assert.equal(await server.stop(), 0, 'SIGTERM exits 0')
    }
  })

  test('TRAVELOPS_ALLOW_PRIVATE_TARGETS=1 allows private targets; =0 or false leaves them refused', async () => {
    const tenant = await runJson(['tenants', 'create', '--name', 'Env twins', '--db', db])
    const key = await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])
    const body = JSON.stringify({ url: 'http://127.0.0.1:9/hook', events: ['*'], secret: 'x'.repeat(16) })
    for (const [value, status] of [['1', 201], ['true', 201], ['0', 422], ['false', 422], ['', 422]] as const) {
      const server = await startServe(['--db', db, '--log-level', 'warn'], { TRAVELOPS_ALLOW_PRIVATE_TARGETS: value })
      try {
        const r = await fetch(`${server.url}/v1/webhooks`, { method: 'POST', body, headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' } })
        assert.equal(r.status, status, `TRAVELOPS_ALLOW_PRIVATE_TARGETS=${value}`)
      } finally {
        assert.equal(await server.stop(), 0)
      }
    }
  })

  test('migrate applies once and --status lists the files', async () => {
    const fresh = join(dir, 'migrate.db')
    const first = await runJson(['migrate', '--db', fresh])
    assert.ok(first.applied.length >= 2)
    assert.deepEqual((await runJson(['migrate', '--db', fresh])).applied, [])
    const status = await runJson(['migrate', '--status', '--db', fresh])
    assert.ok(status.every((m: { applied_at: string | null }) => m.applied_at !== null))
  })
})
