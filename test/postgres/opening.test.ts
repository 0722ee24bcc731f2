import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import pg from 'pg'
import { openDatabase } from '../../src/engine/open.ts'
import { migratePostgres } from '../../src/engine/postgres/migrate.ts'
import { loadMigrationFiles } from '../../src/db/migration-files.ts'
import { runCli, runJson } from '../helpers/cli.ts'
import { newPgDatabase } from '../helpers/engine.ts'

// CONTRACT §10, opening safely, on PostgreSQL: another application's database and one migrated
// by a newer travelops are refused by every command with nothing written; backup points to pg_dump.

const FILES = loadMigrationFiles('postgres')
const LATEST = FILES.at(-1)!.name

async function query<T>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text)).rows as T[]
  } finally {
    await client.end()
  }
}

const tables = (url: string) => query<{ t: string }>(url, "select table_name as t from information_schema.tables where table_schema = 'public' order by 1").then((r) => r.map((x) => x.t))

describe('opening safely, PostgreSQL', () => {
  test('another application\'s database is refused by every command, serve and migrate included; nothing is written', async () => {
    const url = await newPgDatabase()
    await query(url, "create table products (id serial primary key, name text); insert into products (name) values ('kettle')")
    for (const args of [['tenants', 'list'], ['keys', 'list', '--tenant', 'ten_01a2006f-8a5a-7042-87ba-09d34df5a262'], ['migrate'], ['migrate', '--status'], ['serve', '--port', '0']]) {
      const r = await runCli([...args, '--db', url])
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`)
      assert.match(r.stderr, /is not a travelops database: it holds other tables \(products\)/)
    }
    assert.deepEqual(await tables(url), ['products'])
  })

  test('a database migrated by a newer travelops is refused, naming both; one that needs migrations asks for migrate', async () => {
    const url = await newPgDatabase()
    const opened = await openDatabase(url, { create: true })
    await migratePostgres(opened.db, FILES.slice(0, -1))
    await opened.close()
    const pending = await runCli(['tenants', 'list', '--db', url])
    assert.equal(pending.code, 1)
    assert.match(pending.stderr, new RegExp(`needs 1 migration \\(${LATEST}\\)`))
    assert.deepEqual((await runJson(['migrate', '--db', url])).applied, [LATEST])
    await query(url, "insert into schema_migrations (name, checksum, applied_at) values ('9001_from_the_future.sql', 'x', '2027-01-01T00:00:00.000Z')")
    for (const args of [['tenants', 'list'], ['migrate'], ['serve', '--port', '0']]) {
      const r = await runCli([...args, '--db', url])
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`)
      assert.match(r.stderr, new RegExp(`was migrated by a newer travelops: it has 9001_from_the_future\\.sql applied, and this build knows migrations up to ${LATEST}`))
    }
  })

  test('backup on PostgreSQL is a usage error pointing to pg_dump; an unreachable server is exit 1 without the password', async () => {
    const url = await newPgDatabase()
    const backup = await runCli(['backup', 'copy.db', '--db', url])
    assert.equal(backup.code, 2)
    assert.match(backup.stderr, /pg_dump/)
    const down = await runCli(['tenants', 'list', '--db', 'postgres://travelops:hunter2@127.0.0.1:9/travelops'])
    assert.equal(down.code, 1)
    assert.match(down.stderr, /cannot open postgres:\/\/travelops:\*\*\*@127\.0\.0\.1:9\/travelops/)
    assert.doesNotMatch(down.stderr, /hunter2/)
  })
})
