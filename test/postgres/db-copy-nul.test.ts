import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { migrate } from '../../src/engine/sqlite/migrate.ts'
import { openSqlite } from '../../src/engine/sqlite/sqlite.ts'
import { apiClient, runCli, runJson, startServe } from '../helpers/cli.ts'
import { newPgDatabase } from '../helpers/engine.ts'

// CONTRACT §16: `db copy` from a SQLite file that already holds a U+0000 (written before the API
// refused it) stops before writing anything, naming the table, the row's id and the column.

describe('travelops db copy of a string PostgreSQL cannot store', () => {
  let dir: string
  let file: string
  let customerId: string

  before(async () => {
    assert.ok(process.env.TRAVELOPS_TEST_PG_URL, 'needs TRAVELOPS_TEST_PG_URL')
    dir = mkdtempSync(join(tmpdir(), 'travelops-copy-nul-'))
    file = join(dir, 'nul.db')
    const sqlite = openSqlite(file)
    migrate(sqlite)
    sqlite.close()
    const tenant = await runJson(['tenants', 'create', '--name', 'Nul Tours', '--db', file])
    const { key } = await runJson(['keys', 'create', '--tenant', tenant.id, '--db', file])
    const serve = await startServe(['--db', file, '--log-level', 'warn'])
    try {
      const call = apiClient(serve.url, key)
      for (const name of ['Ada', 'Grace']) assert.equal((await call('POST', '/v1/customers', { firstName: name, lastName: 'L', email: `${name}@example.com` })).status, 201)
      customerId = (await call('GET', '/v1/customers?limit=1')).body.data[0].id
    } finally {
      await serve.stop()
    }
    const db = openSqlite(file)
    db.prepare('UPDATE customers SET last_name = ? WHERE id = ?').run('Love\u0000lace', customerId)
    assert.equal((db.prepare('SELECT last_name FROM customers WHERE id = ?').get(customerId) as { last_name: string }).last_name, 'Love\u0000lace')
    db.close()
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  test('refused with exit 1 naming customers, the row and last_name; the PostgreSQL target is left untouched', async () => {
    const target = await newPgDatabase()
    const r = await runCli(['db', 'copy', '--from', file, '--to', target])
    assert.equal(r.code, 1, r.stderr)
    assert.equal(r.stdout, '')
    assert.match(r.stderr, new RegExp(`table customers, row ${customerId}, column last_name holds U\\+0000`))
    assert.match(r.stderr, /nothing was written/)
    const client = new pg.Client({ connectionString: target })
    await client.connect()
    try {
      const tables = await client.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`)
      assert.equal(tables.rows[0].n, 0, 'not even migrated')
    } finally {
      await client.end()
    }
    // Once the value is fixed on the source, the same copy goes through.
    const db = openSqlite(file)
    db.prepare('UPDATE customers SET last_name = ? WHERE id = ?').run('Lovelace', customerId)
    db.close()
    const ok = await runCli(['db', 'copy', '--from', file, '--to', target, '--json'])
    assert.equal(ok.code, 0, ok.stderr)
    assert.equal(JSON.parse(ok.stdout).tables.customers, 2)
  })
})
