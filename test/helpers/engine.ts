import pg from 'pg'

// Which engine the suite runs on: TRAVELOPS_TEST_ENGINE=postgres runs the tests that start a
// server through the helpers on PostgreSQL (TRAVELOPS_TEST_PG_URL, a server the global setup
// started or one given), each test app in a database of its own.

export type TestEngine = 'sqlite' | 'postgres'

export function testEngine(): TestEngine {
  return process.env.TRAVELOPS_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite'
}

let _counter = 0

/** A new, empty database on the test server; its URL. */
export async function newPgDatabase(): Promise<string> {
  const base = process.env.TRAVELOPS_TEST_PG_URL
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

/** The test app's database opened again by the test itself, with the delivery store of its engine. */
export async function openWithStore(target: string) {
  const [{ openDatabase }, { sqliteDeliveryStore }, { pgDeliveryStore }] = await Promise.all([
    import('../../src/db/connect.ts'), import('../../src/db/delivery-store.ts'), import('../../src/db/pg-delivery-store.ts'),
  ])
  const opened = await openDatabase(target)
  const store = opened.engine === 'postgres' ? pgDeliveryStore(opened.db, target) : sqliteDeliveryStore(opened.db)
  return { opened, store }
}
