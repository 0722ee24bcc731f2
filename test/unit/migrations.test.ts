import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { migrate, migrationStatus } from '../../src/engine/sqlite/migrate.ts'
import { loadMigrationFiles } from '../../src/db/migration-files.ts'
import { openSqlite } from '../../src/engine/sqlite/sqlite.ts'

const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), 'travelops-mig-'))
  return { db: openSqlite(join(dir, 'm.db')), done: () => rmSync(dir, { recursive: true, force: true }) }
}

test('migrations apply in order, once, and are recorded with a checksum', () => {
  const { db, done } = fresh()
  const files = loadMigrationFiles()
  assert.deepEqual(migrate(db), files.map((f) => f.name))
  assert.deepEqual(migrate(db), [])
  assert.ok(migrationStatus(db).every((s) => s.applied_at && /^[0-9a-f]{64}$/.test(s.checksum)))
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal')
  assert.equal(db.pragma('foreign_keys', { simple: true }), 1)
  db.close()
  done()
})

test('an applied migration that was edited is refused', () => {
  const { db, done } = fresh()
  const files = loadMigrationFiles()
  migrate(db, files)
  const edited = files.map((f, i) => (i === 0 ? { ...f, sql: f.sql + '\n-- edited' } : f))
  assert.throws(() => migrate(db, edited), /checksum/)
  db.close()
  done()
})

test('a failing migration leaves nothing behind (one transaction each)', () => {
  const { db, done } = fresh()
  const files = [...loadMigrationFiles(), { name: '9999_broken.sql', sql: 'CREATE TABLE half (id TEXT); INSERT INTO nope VALUES (1);' }]
  assert.throws(() => migrate(db, files))
  assert.equal((db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'half'").get() as { n: number }).n, 0)
  assert.equal(migrationStatus(db, files).find((s) => s.name === '9999_broken.sql')!.applied_at, null)
  db.close()
  done()
})

test('architecture: every table holding tenant data has tenant_id NOT NULL', () => {
  const { db, done } = fresh()
  migrate(db)
  // Tables of the installation, not of a tenant: the tenants themselves, the migrations, the running serve processes,
  // and the dashboard's sign-ins (the operator's links and sessions belong to no tenant; a tenant's carry its tenant_id).
  const global = new Set(['tenants', 'schema_migrations', 'serve_processes', 'dashboard_links', 'dashboard_sessions'])
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[]).map((t) => t.name)
  assert.ok(tables.length > 5)
  for (const table of tables.filter((t) => !global.has(t))) {
    const col = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string; notnull: number }[]).find((c) => c.name === 'tenant_id')
    assert.ok(col, `${table} has tenant_id`)
    assert.equal(col.notnull, 1, `${table}.tenant_id is NOT NULL`)
  }
  db.close()
  done()
})
