import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { migrate } from '../../src/engine/sqlite/migrate.ts'
import { loadMigrationFiles } from '../../src/db/migration-files.ts'
import { openSqlite } from '../../src/engine/sqlite/sqlite.ts'
import { runCli, runJson } from '../helpers/cli.ts'

// CONTRACT §10, opening safely: only serve and migrate create a database; another
// application's database and one migrated by a newer travelops are refused by every command,
// and nothing is written into them.

const FILES = loadMigrationFiles()
const LATEST = FILES.at(-1)!.name
const TEN = 'ten_01a2006f-8a5a-7042-87ba-09d34df5a262'

/** Every command that opens the database, with arguments that would otherwise succeed or fail later. */
const COMMANDS = (dir: string) => [
  ['tenants', 'list'],
  ['tenants', 'create', '--name', 'X'],
  ['keys', 'list', '--tenant', TEN],
  ['keys', 'create', '--tenant', TEN],
  ['keys', 'revoke', 'key_01a2006f-8a5a-7042-87ba-09d34df5a262', '--yes'],
  ['deliveries', 'list'],
  ['deliveries', 'show', 'del_01a2006f-8a5a-7042-87ba-09d34df5a262'],
  ['deliveries', 'retry', 'del_01a2006f-8a5a-7042-87ba-09d34df5a262'],
  ['deliveries', 'replay', '--webhook', 'wh_01a2006f-8a5a-7042-87ba-09d34df5a262', '--yes'],
  ['migrate', '--status'],
  ['backup', join(dir, `copy-${Math.random().toString(36).slice(2)}.db`)],
]

const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex')
/** The files SQLite keeps beside a database (-wal, -shm, -journal): CONTRACT §16, a refusal leaves none. */
const beside = (file: string) => readdirSync(dirname(file)).filter((n) => n.startsWith(`${basename(file)}-`))

describe('opening safely', () => {
  let dir: string
  before(() => (dir = mkdtempSync(join(tmpdir(), 'travelops-open-'))))
  after(() => rmSync(dir, { recursive: true, force: true }))

  test('a missing file: every command but serve and migrate exits 1 with "no database at <path>" and creates nothing', async () => {
    const missing = join(dir, 'typo.db')
    for (const args of COMMANDS(dir)) {
      const r = await runCli([...args, '--db', missing])
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`)
      assert.match(r.stderr, new RegExp(`^error: no database at ${missing}`), args.join(' '))
      assert.equal(existsSync(missing), false, `${args.join(' ')} created the file`)
    }
    assert.deepEqual(readdirSync(dir), [], 'nothing at all was created')
    const made = await runJson(['migrate', '--db', missing])
    assert.equal(made.applied.length, FILES.length)
    assert.deepEqual(await runJson(['tenants', 'list', '--db', missing]), [])
  })

  test('another application\'s SQLite file is refused by every command, serve and migrate included, and left byte for byte as it was', async () => {
    const foreign = join(dir, 'shop.db')
    const db = openSqlite(foreign)
    db.exec("CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO products (name) VALUES ('kettle')")
    db.close()
    assert.deepEqual(beside(foreign), [], 'closed cleanly: no WAL left')
    const before = sha(foreign)
    for (const args of [...COMMANDS(dir), ['migrate'], ['serve', '--port', '0']]) {
      const r = await runCli([...args, '--db', foreign])
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`)
      assert.match(r.stderr, /is not a travelops database: it holds other tables \(products\)/, args.join(' '))
      assert.equal(sha(foreign), before, `${args.join(' ')} changed the file`)
      assert.deepEqual(beside(foreign), [], `${args.join(' ')} left files beside it`)
    }
    const after = openSqlite(foreign, { readonly: true })
    assert.deepEqual(after.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all(), [{ name: 'products' }])
    after.close()
  })

  test('a file that is not a SQLite database at all is refused, unchanged', async () => {
    const text = join(dir, 'notes.txt')
    writeFileSync(text, 'dear diary\n'.repeat(200))
    for (const args of [['tenants', 'list'], ['migrate'], ['serve', '--port', '0']]) {
      const r = await runCli([...args, '--db', text])
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`)
      assert.match(r.stderr, /is not a SQLite database/)
    }
    assert.equal(readFileSync(text, 'utf8'), 'dear diary\n'.repeat(200))
  })

  test('a database migrated by a newer travelops is refused by every command, naming both, with nothing written', async () => {
    const newer = join(dir, 'newer.db')
    const db = openSqlite(newer)
    migrate(db)
    db.prepare("INSERT INTO schema_migrations (name, checksum, applied_at) VALUES ('9001_from_the_future.sql', 'x', '2027-01-01T00:00:00.000Z')").run()
    db.close()
    assert.deepEqual(beside(newer), [], 'closed cleanly: no WAL left')
    const before = sha(newer)
    for (const args of [...COMMANDS(dir), ['migrate'], ['serve', '--port', '0']]) {
      const r = await runCli([...args, '--db', newer])
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`)
      assert.match(r.stderr, new RegExp(`was migrated by a newer travelops: it has 9001_from_the_future\\.sql applied, and this build knows migrations up to ${LATEST}`), args.join(' '))
      assert.equal(sha(newer), before, `${args.join(' ')} changed the file`)
      assert.deepEqual(beside(newer), [], `${args.join(' ')} left files beside it`)
    }
  })

  test('a database that needs migrations: data commands say to run migrate; migrate --status and backup work; migrate applies them', async () => {
    const older = join(dir, 'older.db')
    const db = openSqlite(older)
    migrate(db, FILES.slice(0, -1))
    db.close()
    const r = await runCli(['tenants', 'list', '--db', older])
    assert.equal(r.code, 1)
    assert.match(r.stderr, new RegExp(`needs 1 migration \\(${LATEST}\\); run: travelops migrate --db ${older}`))
    const status = await runJson(['migrate', '--status', '--db', older])
    assert.equal(status.at(-1).applied_at, null)
    assert.equal((await runCli(['backup', join(dir, 'older-copy.db'), '--db', older])).code, 0)
    assert.deepEqual((await runJson(['migrate', '--db', older])).applied, [LATEST])
    assert.deepEqual(await runJson(['tenants', 'list', '--db', older]), [])
  })
})
