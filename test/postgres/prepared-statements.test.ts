import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql, type Kysely } from 'kysely'
import type pg from 'pg'
import { openPostgres, PREPARED_PER_CONNECTION } from '../../src/engine/postgres/pool.ts'
import type { Database } from '../../src/db/schema.ts'
import { serializableTx } from '../../src/engine/postgres/transactions.ts'
import { newPgDatabase } from '../helpers/engine.ts'

// Statements with parameters are prepared once per connection (src/engine/postgres/pool.ts). Each case
// uses a pool of one connection, so what it prepared is what pg_prepared_statements shows.
describe('statements prepared once per connection (PostgreSQL)', () => {
  let url: string
  const opened: { db: Kysely<Database>; pool: pg.Pool }[] = []
  const open = () => {
    const o = openPostgres(url, { max: 1 })
    opened.push(o)
    return o.db
  }
  const prepared = async (db: Kysely<Database>) =>
    (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements where name like 'travelops_%'`.execute(db)).rows

  before(async () => {
    url = await newPgDatabase()
    const db = open()
    await sql`create table prep_t (id int primary key, label text not null)`.execute(db)
    await sql`insert into prep_t values (1, 'one'), (2, 'two'), (3, 'three')`.execute(db)
  })
  after(async () => {
    for (const o of opened) await o.db.destroy()
  })

  test('a statement with parameters is prepared the first time and reused after, with the right rows each time', async () => {
    const db = open()
    for (const id of [1, 2, 3, 2]) {
      const rows = (await sql<{ label: string }>`select label from prep_t where id = ${id}`.execute(db)).rows
      assert.deepEqual(rows, [{ label: ['one', 'two', 'three'][id - 1] }])
    }
    const p = await prepared(db)
    assert.equal(p.length, 1, JSON.stringify(p))
    assert.match(p[0]!.statement, /select label from prep_t where id = \$1/)
  })

  test('one connection keeps at most PREPARED_PER_CONNECTION statements; those past it still answer', async () => {
    const db = open()
    const n = PREPARED_PER_CONNECTION + 20
    for (let i = 0; i < n; i++) {
      const rows = (await sql<{ v: number }>`select ${i}::int + ${sql.lit(i)} as v`.execute(db)).rows
      assert.deepEqual(rows, [{ v: 2 * i }])
    }
    assert.equal((await prepared(db)).length, PREPARED_PER_CONNECTION)
  })

  test('TRAVELOPS_PG_PREPARE=0 sends every statement unnamed', async () => {
    process.env.TRAVELOPS_PG_PREPARE = '0'
    let db: Kysely<Database>
    try {
      db = open()
    } finally {
      delete process.env.TRAVELOPS_PG_PREPARE
    }
    for (const id of [1, 2]) assert.equal((await sql`select label from prep_t where id = ${id}`.execute(db)).rows.length, 1)
    assert.deepEqual(await prepared(db), [])
  })

  test('a table changed under a prepared statement: run again at once outside a transaction, and withTx runs its transaction again', async () => {
    const db = open()
    await sql`create table prep_u (id int primary key, label text not null)`.execute(db)
    await sql`insert into prep_u values (1, 'one')`.execute(db)
    const read = async (q: Kysely<Database>) => (await sql<Record<string, unknown>>`select * from prep_u where id = ${1}`.execute(q)).rows
    assert.deepEqual(await read(db), [{ id: 1, label: 'one' }])
    await sql`alter table prep_u add column extra int not null default 7`.execute(db)
    assert.deepEqual(await read(db), [{ id: 1, label: 'one', extra: 7 }])

    await sql`alter table prep_u add column more text not null default 'm'`.execute(db)
    let runs = 0
    const rows = await serializableTx(db, async ({ tx }) => {
      runs++
      return read(tx as never)
    })
    assert.deepEqual(rows, [{ id: 1, label: 'one', extra: 7, more: 'm' }])
    assert.equal(runs, 2) // the first run met the stale statement; its transaction ran again
  })
})
