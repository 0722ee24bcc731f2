import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { openSqlite } from '../../src/engine/sqlite/sqlite.ts'
import { orderBody } from '../helpers/app.ts'
import { apiClient, runCli, runJson, startServe, until, type ServeProcess, migratedDb } from '../helpers/cli.ts'

describe('travelops backup', () => {
  let dir: string
  let db: string
  let backups: string
  let server: ServeProcess
  let api: ReturnType<typeof apiClient>

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-backup-'))
    db = await migratedDb(join(dir, 'live.db'))
    backups = join(dir, 'backups')
    mkdirSync(backups)
    const tenant = await runJson(['tenants', 'create', '--name', 'Backed Up', '--db', db])
    const key = await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])
    server = await startServe(['--db', db, '--log-level', 'warn'])
    chmodSync(db, 0o600) // the copy holds the same secrets: it gets the same permissions
    api = apiClient(server.url, key.key)
  })

  after(async () => {
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  test('a copy taken while serve is creating orders is a valid database with every order committed before it started', async () => {
    const created: string[] = [] // ids whose 201 has arrived, in order
    const failures: string[] = []
    let writing = true
    const writer = async () => {
      while (writing) {
        const r = await api('POST', '/v1/orders', orderBody({ notes: 'x'.repeat(2000) }))
        if (r.status === 201) created.push(r.body.data.id)
        else failures.push(`${r.status} ${JSON.stringify(r.body)}`)
      }
    }
    const writers = [writer(), writer(), writer()]
    await until('orders to be committed before the backup', () => created.length >= 150)

    const committedBefore = [...created]
    const dest = join(backups, 'copy.db')
    const r = await runCli(['backup', dest, '--db', db, '--json'])
    const createdDuring = created.length - committedBefore.length
    writing = false
    await Promise.all(writers)

    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(failures, [], 'serve kept answering while the backup ran')
    assert.ok(createdDuring > 0, 'orders were being written while the backup ran')
    const report = JSON.parse(r.stdout)
    assert.equal(report.backup, dest)
    assert.equal(report.bytes, statSync(dest).size)
    assert.ok(report.pages > 0)
    assert.deepEqual(readdirSync(backups), ['copy.db'], 'no temporary file is left behind')
    assert.equal(statSync(dest).mode & 0o777, 0o600)

    const copy = openSqlite(dest)
    try {
      assert.deepEqual(copy.pragma('integrity_check'), [{ integrity_check: 'ok' }])
      const inCopy = new Set((copy.prepare('SELECT id FROM orders').all() as { id: string }[]).map((o) => o.id))
      const missing = committedBefore.filter((id) => !inCopy.has(id))
      assert.deepEqual(missing, [], 'every order committed before the backup started is in the copy')
      const everCreated = new Set(created)
      assert.ok([...inCopy].every((id) => everCreated.has(id)))
    } finally {
      copy.close()
    }
    const tenants = await runJson(['tenants', 'list', '--db', dest])
    assert.deepEqual(tenants.map((t: { name: string }) => t.name), ['Backed Up'], 'travelops opens the copy')
  })

  test('an existing file is kept unless --force; --force replaces it', async () => {
    const dest = join(backups, 'keep.db')
    writeFileSync(dest, 'precious')
    const refused = await runCli(['backup', dest, '--db', db, '--json'])
    assert.equal(refused.code, 1)
    assert.equal(refused.stdout, '')
    assert.match(refused.stderr, /exists; pass --force/)
    assert.equal(statSync(dest).size, 'precious'.length)
    const forced = await runJson(['backup', dest, '--db', db, '--force'])
    assert.equal(forced.bytes, statSync(dest).size)
    assert.ok(forced.bytes > 4096)
    const human = await runCli(['backup', join(backups, 'human.db'), '--db', db])
    assert.equal(human.code, 0)
    assert.match(human.stdout, /^backed up .* \(\d+ bytes, \d+ pages\)\n$/)
  })

  test('exit codes: 1 for a missing database or destination directory, 2 for usage errors', async () => {
    assert.equal((await runCli(['backup', join(backups, 'a.db'), '--db', join(dir, 'nope.db')])).code, 1)
    assert.equal((await runCli(['backup', join(dir, 'no-such-dir', 'a.db'), '--db', db])).code, 1)
    assert.equal((await runCli(['backup', '--db', db])).code, 2, 'no destination')
    assert.equal((await runCli(['backup', db, '--db', db, '--force'])).code, 2, 'the database itself')
    assert.equal((await runCli(['backup', join(backups, 'b.db'), '--db', db, '--frob'])).code, 2)
    assert.deepEqual(readdirSync(backups).sort(), ['copy.db', 'human.db', 'keep.db'])
  })

  test('a missing destination directory: the error says how (--mkdir or mkdir -p); --mkdir creates it, owner-only', async () => {
    const nested = join(dir, 'night ly', 'o\'clock')
    const missing = await runCli(['backup', join(nested, 'a.db'), '--db', db, '--json'])
    assert.equal(missing.code, 1)
    assert.equal(missing.stdout, '')
    assert.equal(missing.stderr, `error: backup failed: the directory ${nested} does not exist; pass --mkdir to create it, or run: mkdir -p '${dir}/night ly/o'\\''clock'\n`)
    assert.equal(existsSync(join(dir, 'night ly')), false, 'nothing created without --mkdir')
    const made = await runJson(['backup', join(nested, 'a.db'), '--db', db, '--mkdir'])
    assert.equal(made.backup, join(nested, 'a.db'))
    assert.equal(statSync(nested).mode & 0o777, 0o700)
    assert.equal(statSync(join(dir, 'night ly')).mode & 0o777, 0o700)
    const copy = openSqlite(made.backup, { readonly: true })
    try {
      assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok')
    } finally {
      copy.close()
    }
    assert.equal((await runCli(['backup', join(nested, 'b.db'), '--db', db, '--mkdir'])).code, 0, '--mkdir on an existing directory is fine')
    writeFileSync(join(dir, 'plain-file'), '')
    const blocked = await runCli(['backup', join(dir, 'plain-file', 'sub', 'a.db'), '--db', db, '--mkdir'])
    assert.equal(blocked.code, 1)
    assert.match(blocked.stderr, /^error: backup failed: cannot create .*plain-file\/sub/)
  })
})
