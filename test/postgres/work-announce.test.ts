import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { openDatabase, type OpenDb } from '../../src/db/connect.ts'
import { pgDeliveryStore } from '../../src/db/pg-delivery-store.ts'
import { newPgDatabase } from '../helpers/engine.ts'

// New work on PostgreSQL is announced with NOTIFY for the other serve processes' workers; the
// announcing process's own worker was already woken by the commit itself (server.ts), so its
// listener ignores its own announcements (each would cost a needless delivery cycle).
describe('work announcements between serve processes', () => {
  let url: string
  let a: OpenDb
  let b: OpenDb
  const stops: (() => Promise<void>)[] = []
  before(async () => {
    url = await newPgDatabase()
    a = await openDatabase(url, { create: true, migrate: true })
    b = await openDatabase(url)
  })
  after(async () => {
    for (const stop of stops) await stop()
    await b?.close()
    await a?.close()
  })

  const listening = async (db: OpenDb['db']) => {
    const store = pgDeliveryStore(db, url)
    const woken = { count: 0 }
    stops.push(await store.listen!(() => woken.count++))
    return { store, woken }
  }
  const until = async (ok: () => boolean, ms: number, what: string) => {
    const t0 = Date.now()
    while (!ok()) {
      if (Date.now() - t0 > ms) throw new Error(`${what} within ${ms} ms`)
      await new Promise((r) => setTimeout(r, 5))
    }
  }

  test("another process's announcement wakes a worker; its own does not", async () => {
    const one = await listening(a.db)
    const two = await listening(b.db)
    one.store.announce()
    await until(() => two.woken.count === 1, 5_000, 'the other process was not woken')
    // Both listeners are sent each NOTIFY at its commit; give the announcer's own one more time
    // to arrive than the other's took, with a round trip through the server in between.
    await new Promise((r) => setTimeout(r, 200))
    await b.db.selectNoFrom((eb) => eb.lit(1).as('one')).execute()
    assert.equal(one.woken.count, 0, 'the announcing process heard its own announcement')

    two.store.announce()
    await until(() => one.woken.count === 1, 5_000, 'the first process was not woken by the second')
    await new Promise((r) => setTimeout(r, 200))
    assert.equal(two.woken.count, 1, 'the second process heard its own announcement')
  })
})
