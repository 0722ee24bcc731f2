import assert from 'node:assert/strict'
import { sql } from 'kysely'
import { newId } from '../../src/lib/ids.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { eachEngine, type Env } from './each-engine.ts'

// The port's event feed (EventFeed, src/engine/port.ts), behind GET /v1/events/stream: the
// events of some tenants in an order no later commit goes back before, read from a position,
// resumed after an event, and wake-ups when new ones commit. On PostgreSQL a server of its own:
// a write transaction anywhere in the cluster holds the feed's events back, and other files
// write beside this one.

const at = () => new Date().toISOString()

/** Writes one event of `tenantId` in a transaction of its own, as emit() does; its id. */
async function write(env: Env, tenantId = env.tenantId, name = 'order.created'): Promise<string> {
  return env.engine.withTx(async ({ tx }) => {
    const id = newId('evt')
    await env.engine.writeEvent(tx, { id, tenantId, name, at: at(), payload: `{"id":"${id}"}` })
    return id
  })
}

/** Everything after `position` for these tenants, read in pages of `page`. */
async function readAll(env: Env, tenants: string[], position: string, page = 100): Promise<{ ids: string[]; positions: string[] }> {
  const ids: string[] = []
  const positions: string[] = []
  for (;;) {
    const rows = await env.engine.feed.after(tenants, position, page)
    for (const r of rows) {
      ids.push(r.id)
      positions.push(r.position)
      position = r.position
    }
    if (rows.length < page) return { ids, positions }
  }
}

eachEngine('Engine.feed, the event feed', (s) => {
  s.test('reads the events committed after a position, in the order written, of the tenants asked for only', async (env) => {
    const other = (await createTenant(env.opened.db, 'Other', new Date())).id
    const head = await env.engine.feed.head()
    const mine = [await write(env), await write(env)]
    const theirs = await write(env, other)
    mine.push(await write(env))
    const read = await readAll(env, [env.tenantId], head, 2)
    assert.deepEqual(read.ids, mine)
    assert.deepEqual([...read.positions].sort(), read.positions, 'positions increase as text')
    assert.ok(read.positions.every((p) => p > head))
    assert.deepEqual((await readAll(env, [env.tenantId, other], head)).ids, [...mine.slice(0, 2), theirs, mine[2]])
    assert.deepEqual(await env.engine.feed.after([], head, 10), [])
    const row = (await env.engine.feed.after([other], head, 10))[0]!
    assert.deepEqual({ ...row, position: '' }, { position: '', id: theirs, tenantId: other, name: 'order.created', payload: `{"id":"${theirs}"}` })
  })

  s.test('an event rolled back is never read; the head moves past what committed', async (env) => {
    const head = await env.engine.feed.head()
    const id = newId('evt')
    await assert.rejects(env.engine.withTx(async ({ tx }) => {
      await env.engine.writeEvent(tx, { id, tenantId: env.tenantId, name: 'order.created', at: at(), payload: '{}' })
      throw new Error('rolled back')
    }), /rolled back/)
    const kept = await write(env)
    assert.deepEqual((await readAll(env, [env.tenantId], head)).ids, [kept])
    const next = await env.engine.feed.head()
    assert.ok(next >= (await env.engine.feed.after([env.tenantId], head, 1))[0]!.position)
    assert.deepEqual((await readAll(env, [env.tenantId], next)).ids, [])
  })

  s.test('resumes after an event kept, and after one no longer kept with the events made after it', async (env) => {
    const ids = [await write(env), await write(env), await write(env)]
    assert.deepEqual((await readAll(env, [env.tenantId], await env.engine.feed.resumeAfter(env.tenantId, ids[0]!))).ids, ids.slice(1))
    // Retention removed the first two (their deliveries are gone: there are none).
    await env.opened.db.deleteFrom('events').where('id', 'in', ids.slice(0, 2)).execute()
    assert.deepEqual((await readAll(env, [env.tenantId], await env.engine.feed.resumeAfter(env.tenantId, ids[0]!))).ids, [ids[2]])
    // Another tenant's id tells nothing of this tenant's events: what comes after it is read from there.
    const last = await env.engine.feed.resumeAfter(env.tenantId, ids[2]!)
    assert.deepEqual((await readAll(env, [env.tenantId], last)).ids, [])
    const later = await write(env)
    assert.deepEqual((await readAll(env, [env.tenantId], last)).ids, [later])
  })

  s.test('committed() wakes this process\'s watchers once, and none that stopped watching', async (env) => {
    let stoppedWakes = 0
    const stop = await env.engine.feed.watch(() => stoppedWakes++)
    await stop()
    let wakes = 0
    let woken: (() => void) | undefined
    const stopSecond = await env.engine.feed.watch(() => { wakes++; woken?.() })
    try {
      // A wake the watch itself causes (PostgreSQL: events may have committed while nobody listened) has run by now.
      await new Promise((r) => setImmediate(r))
      const before = wakes
      const first = new Promise<void>((r) => { woken = r })
      await write(env)
      env.engine.feed.committed()
      env.engine.feed.committed()
      await first
      // Woken in the same turn as any other watcher would have been: the stopped one was not.
      assert.equal(stoppedWakes, 0)
      await new Promise((r) => setImmediate(r))
      assert.equal(wakes - before, 1, 'two commits of one turn wake once')
    } finally {
      await stopSecond()
    }
  })

  if (s.name === 'postgres') {
    s.test('another process\'s commits wake the watchers here (LISTEN/NOTIFY)', async (env) => {
      const other = await env.another()
      let woken!: () => void
      const heard = new Promise<void>((r) => { woken = r })
      const stop = await env.engine.feed.watch(() => woken())
      try {
        // The LISTEN connection may still be opening: announce until heard.
        let heardIt = false
        void heard.then(() => { heardIt = true })
        for (let i = 0; i < 50 && !heardIt; i++) {
          other.engine.feed.committed()
          await Promise.race([heard, new Promise((r) => setTimeout(r, 200))])
        }
        assert.ok(heardIt, 'a NOTIFY from another pool woke the watcher')
      } finally {
        await stop()
      }
    })

    s.test('transactions are ordered by their number, not as text: 99 before 100 within one read', async (env) => {
      // Found by a stream that skipped events when the cluster's transaction numbers went from 3
      // digits to 4: the read was ordered by the number as text ('1002' < '997'), and a stream
      // passed what came after it.
      const tenant = (await createTenant(env.opened.db, 'Digits', new Date())).id
      const ids = [await write(env, tenant), await write(env, tenant), await write(env, tenant), await write(env, tenant)]
      for (const [i, tx] of ['97', '98', '99', '100'].entries()) {
        await sql`update events set tx = ${tx}::xid8 where id = ${ids[i]!}`.execute(env.opened.db)
      }
      const read = await readAll(env, [tenant], await env.engine.feed.resumeAfter(tenant, ids[0]!))
      assert.deepEqual(read.ids, ids.slice(1))
      assert.deepEqual([...read.positions].sort(), read.positions, 'positions increase as text')
    })

    s.test('an event committed while an older transaction still runs is read only after that one ends, after its events', async (env) => {
      const other = await env.another()
      const head = await env.engine.feed.head()
      let release!: () => void
      const gate = new Promise<void>((r) => { release = r })
      let written!: () => void
      const wroteSlow = new Promise<void>((r) => { written = r })
      const slowId = newId('evt')
      const slow = other.engine.withTx(async ({ tx }) => {
        await other.engine.writeEvent(tx, { id: slowId, tenantId: env.tenantId, name: 'order.created', at: at(), payload: '{}' })
        written()
        await gate
      })
      await wroteSlow
      const fast = await write(env)
      // The fast one committed, but a transaction older than it still runs: nothing is read yet.
      assert.deepEqual((await readAll(env, [env.tenantId], head)).ids, [])
      release()
      await slow
      assert.deepEqual((await readAll(env, [env.tenantId], head)).ids, [slowId, fast])
    })

    s.test('events held back by an older transaction are read once it ends, though its commit announces nothing', async (env) => {
      // Found by the two-process stream test: a long transaction elsewhere in the cluster (another
      // database's, here one that writes nothing) held an event back, and its end woke no one, so
      // the stream waited for its 1 s poll.
      const other = await env.another()
      const head = await env.engine.feed.head()
      let release!: () => void
      const gate = new Promise<void>((r) => { release = r })
      let begun!: () => void
      const hasXid = new Promise<void>((r) => { begun = r })
      const blocker = other.db.transaction().execute(async (trx) => {
        await sql`select pg_current_xact_id()`.execute(trx)
        begun()
        await gate
      })
      await hasXid
      const fast = await write(env)
      let position = head
      const read: string[] = []
      let gotIt!: () => void
      const got = new Promise<void>((r) => { gotIt = r })
      const readOnce = async () => {
        for (const r of await env.engine.feed.after([env.tenantId], position, 100)) {
          read.push(r.id)
          position = r.position
        }
        if (read.includes(fast)) gotIt()
      }
      // Reads one at a time, as the streams' reader does; `reading` is the last one.
      let reading = Promise.resolve()
      const readNext = () => (reading = reading.then(readOnce))
      const stop = await env.engine.feed.watch(() => void readNext())
      try {
        await readNext() // as the reader's poll would: nothing yet, the event is held back
        // The wake the watch itself causes (the LISTEN connection opened) has read too, before the end.
        await new Promise((r) => setImmediate(r))
        await reading
        assert.deepEqual(read, [])
        release()
        await blocker
        // No commit is announced from here on: only the feed's own wake-ups read the event.
        let timer: NodeJS.Timeout | undefined
        await Promise.race([got, new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('the held event was never read')), 5_000) })])
        clearTimeout(timer)
        assert.deepEqual(read, [fast])
      } finally {
        await stop()
      }
    })
  }
}, { ownPgServer: true })
