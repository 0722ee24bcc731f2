import pg from 'pg'

// Which engine the suite runs on: TRAVELOPS_TEST_ENGINE=postgres runs the tests that start a
// server through the helpers on PostgreSQL (TRAVELOPS_TEST_PG_URL, a server the global setup
// started or one given), each test app in a database of its own.

export type TestEngine = 'sqlite' | 'postgres'

export function testEngine(): TestEngine {
  return process.env.TRAVELOPS_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite'
}

let _counter = 0

/** A new, empty database on the test server (or on the server at `base`); its URL. */
export async function newPgDatabase(base = process.env.TRAVELOPS_TEST_PG_URL): Promise<string> {
  if (!base) throw new Error('TRAVELOPS_TEST_ENGINE=postgres needs TRAVELOPS_TEST_PG_URL (the global setup sets it)')
  const name = `t_${process.pid}_${++_counter}_${Math.random().toString(36).slice(2, 8)}`
  const client = new pg.Client({ connectionString: base })
  await client.connect()
  try {
    await client.query(`CREATE DATABASE ${name}`)
  } finally {
    await client.end()
  }
  const url = new URL(base)
  url.pathname = `/${name}`
  return url.toString()
}

/** The test app's database opened again by the test itself, with the delivery store of its engine (and its endpoint-health policy). */
export async function openWithStore(target: string, health?: { disableAfterMs: number }) {
  const { openDatabase } = await import('../../src/engine/open.ts')
  const opened = await openDatabase(target)
  return { opened, store: opened.engine.deliveryStore(health) }
}

/** Rows of a plain SQL query (`?` placeholders, portable SQL) on the test's database, whichever engine it is. */
export async function queryRows<T = Record<string, unknown>>(target: string, text: string, ...params: unknown[]): Promise<T[]> {
  if (!/^postgres(ql)?:\/\//.test(target)) {
    const { openSqlite } = await import('../../src/engine/sqlite/sqlite.ts')
    const db = openSqlite(target, { readonly: true })
    try {
      return db.prepare(text).all(...params) as T[]
    } finally {
      db.close()
    }
  }
  let n = 0
  const client = new pg.Client({ connectionString: target, types: { getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 || oid === 1700 ? Number : pg.types.getTypeParser(oid, format)) } as unknown as pg.CustomTypesConfig })
  await client.connect()
  try {
    return (await client.query(text.replace(/\?/g, () => `$${++n}`), params)).rows as T[]
  } finally {
    await client.end()
  }
}

/** Everything the database holds, as text (SQLite: the file's bytes; PostgreSQL: every table's rows), to check a secret is not in it. */
export async function databaseText(target: string): Promise<string> {
  if (!/^postgres(ql)?:\/\//.test(target)) {
    const { readFileSync } = await import('node:fs')
    return readFileSync(target).toString('latin1')
  }
  const tables = await queryRows<{ t: string }>(target, "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public'")
  const parts = await Promise.all(tables.map(({ t }) => queryRows(target, `SELECT * FROM ${t}`)))
  return JSON.stringify(parts)
}
