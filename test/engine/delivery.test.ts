import assert from 'node:assert/strict'
import type { Db } from '../../src/db/connect.ts'
import type { Lease } from '../../src/delivery/port.ts'
import { insertWebhook } from '../helpers/store.ts'
import { eachEngine, type Env } from './each-engine.ts'

// The port's outbox writer (writeEvent()), the parts of the delivery store that
// test/db/delivery-rules-agree.test.ts does not hold to the rules (renew, release, recover: it
// covers cycle()'s recording and claiming, and fan-out's matching), the queue drop and gauges,
// and retention's locked read, as a contract on a real database of each engine.

const HOUR = 3_600_000
const at = (ms: number) => new Date(Date.parse('2026-06-01T10:00:00.000Z') + ms).toISOString()
let n = 0

/** An event row and `rows.length` deliveries of it to `webhookId`, each with the columns given; their ids. */
async function deliveries(env: Env, webhookId: string, rows: Record<string, unknown>[]): Promise<string[]> {
  const eventId = `evt_engine_${++n}`
  await env.opened.db.insertInto('events').values({ id: eventId, tenant_id: env.tenantId, name: 'order.created', payload: '{}', created_at: at(-HOUR) }).execute()
  const ids: string[] = []
  for (const [i, r] of rows.entries()) {
    const id = `del_engine_${n}_${i}`
    await env.opened.db.insertInto('deliveries').values({
      id, tenant_id: env.tenantId, webhook_id: webhookId, event_id: eventId, event: 'order.created', created_at: at(-HOUR),
      status: 'pending', attempts: 0, retries: 0, manual: 0, next_retry_at: null, due_at: at(0), delivered_at: null, response_code: null,
      last_attempt_at: null, locked_by: null, locked_until: null, ...r,
    } as never).execute()
    ids.push(id)
  }
  return ids
}

const rowsOf = (db: Db, ids: string[]) => db.selectFrom('deliveries').select(['id', 'status', 'due_at', 'locked_by', 'locked_until'])
  .where('id', 'in', ids).orderBy('id').execute()

eachEngine('Engine.writeEvent(), the outbox writer', (s) => {
  const event = (env: Env) => ({ id: `evt_outbox_${++n}`, tenantId: env.tenantId, name: 'order.created', at: at(0), payload: '{"data":{"id":"ord_1"}}' })

  s.test('writes the event and one unleased delivery for each subscription that wants it, in the caller\'s transaction', async (env) => {
    const wants = await insertWebhook(env.opened.db, env.tenantId, { events: '["order.created"]' })
    const other = await insertWebhook(env.opened.db, env.tenantId, { events: '["order.updated"]' })
    const e = event(env)
    const written = await env.engine.withTx(({ tx }) => env.engine.writeEvent(tx, e))
    assert.ok(written.webhookIds.includes(wants) && !written.webhookIds.includes(other), String(written.webhookIds))
    assert.equal(written.jobs, undefined)
    const rows = await env.opened.db.selectFrom('deliveries').select(['webhook_id', 'status', 'locked_by']).where('event_id', '=', e.id).execute()
    assert.deepEqual(rows.filter((r) => r.webhook_id === wants), [{ webhook_id: wants, status: 'pending', locked_by: null }])
    assert.equal(rows.filter((r) => r.webhook_id === other).length, 0)
    const stored = await env.opened.db.selectFrom('events').select('payload').where('id', '=', e.id).executeTakeFirstOrThrow()
    assert.equal(stored.payload, e.payload)
  })

  s.test('writes nothing when the caller\'s transaction rolls back', async (env) => {
    await insertWebhook(env.opened.db, env.tenantId, { events: '["*"]' })
    const e = event(env)
    await assert.rejects(env.engine.withTx(async ({ tx }) => {
      assert.ok((await env.engine.writeEvent(tx, e)).webhookIds.length > 0)
      throw new Error('rolled back')
    }), /rolled back/)
    assert.equal((await env.opened.db.selectFrom('events').select('id').where('id', '=', e.id).execute()).length, 0)
    assert.equal((await env.opened.db.selectFrom('deliveries').select('id').where('event_id', '=', e.id).execute()).length, 0)
  })

  s.test('under a lease: the deliveries come back as the worker\'s jobs, leased to it, but those of the subscriptions it skips', async (env) => {
    const leased = await insertWebhook(env.opened.db, env.tenantId, { events: '["order.created"]' })
    const skipped = await insertWebhook(env.opened.db, env.tenantId, { events: '["order.created"]' })
    const lease: Lease = { owner: 'wrk_outbox', until: at(HOUR), skip: [skipped] }
    const e = event(env)
    const written = await env.engine.withTx(({ tx }) => env.engine.writeEvent(tx, e, lease))
    const rows = await env.opened.db.selectFrom('deliveries').select(['id', 'webhook_id', 'locked_by']).where('event_id', '=', e.id).execute()
    const byWebhook = new Map(rows.map((r) => [r.webhook_id, r]))
    assert.equal(byWebhook.get(leased)?.locked_by, 'wrk_outbox')
    assert.equal(byWebhook.get(skipped)?.locked_by, null)
    const jobs = written.jobs ?? []
    assert.deepEqual(jobs.filter((j) => j.webhook_id === leased || j.webhook_id === skipped).map((j) => [j.id, j.webhook_id, j.event_id]),
      [[byWebhook.get(leased)!.id, leased, e.id]])
  })
})

eachEngine('the delivery store\'s leases: renew(), release(), recover()', (s) => {
  s.test('renew() extends the owner\'s leases on the deliveries named, and no one else\'s', async (env) => {
    const store = env.engine.deliveryStore()
    const webhook = await insertWebhook(env.opened.db, env.tenantId)
    const ids = await deliveries(env, webhook, [
      { locked_by: 'wrk_a', locked_until: at(HOUR) }, { locked_by: 'wrk_a', locked_until: at(HOUR) }, { locked_by: 'wrk_b', locked_until: at(HOUR) },
    ])
    await store.renew([ids[0]!, ids[2]!], 'wrk_a', at(2 * HOUR))
    assert.deepEqual((await rowsOf(env.opened.db, ids)).map((r) => [r.locked_by, r.locked_until]),
      [['wrk_a', at(2 * HOUR)], ['wrk_a', at(HOUR)], ['wrk_b', at(HOUR)]])
    await store.renew([], 'wrk_a', at(3 * HOUR))
  })

  s.test('release() gives the owner\'s claims back unsent, due at once for any worker; another owner\'s stay leased', async (env) => {
    const store = env.engine.deliveryStore()
    const webhook = await insertWebhook(env.opened.db, env.tenantId)
    const ids = await deliveries(env, webhook, [{ locked_by: 'wrk_a', locked_until: at(HOUR) }, { locked_by: 'wrk_b', locked_until: at(HOUR) }])
    await store.release(ids, 'wrk_a')
    assert.deepEqual((await rowsOf(env.opened.db, ids)).map((r) => [r.status, r.due_at, r.locked_by, r.locked_until]),
      [['pending', at(0), null, null], ['pending', at(0), 'wrk_b', at(HOUR)]])
  })

  const recover = s.name === 'sqlite'
    ? 'recover() frees every lease at once, due or not: one serve per file, so no other worker is alive'
    : 'recover() leaves every lease to expire: other serve processes may be alive and hold them'
  s.test(recover, async (env) => {
    const store = env.engine.deliveryStore()
    const webhook = await insertWebhook(env.opened.db, env.tenantId)
    const ids = await deliveries(env, webhook, [{ locked_by: 'wrk_gone', locked_until: at(HOUR) }, { locked_by: 'wrk_gone', locked_until: at(-HOUR), due_at: at(HOUR) }])
    await store.recover('wrk_new')
    const rows = await rowsOf(env.opened.db, ids)
    if (s.name === 'sqlite') assert.deepEqual(rows.map((r) => [r.locked_by, r.locked_until]), [[null, null], [null, null]])
    else assert.deepEqual(rows.map((r) => [r.locked_by, r.locked_until]), [['wrk_gone', at(HOUR)], ['wrk_gone', at(-HOUR)]])
  })
})

eachEngine('the queue: dropQueue(), countQueued(), earliestDue()', (s) => {
  s.test('countQueued() and earliestDue() see every queued delivery, however small their slices, and nothing that is not queued', async (env) => {
    assert.equal(await env.engine.countQueued(2), 0)
    assert.equal(await env.engine.earliestDue(2), null)
    const a = await insertWebhook(env.opened.db, env.tenantId)
    const b = await insertWebhook(env.opened.db, env.tenantId)
    await deliveries(env, a, [{ due_at: at(3 * HOUR) }, { due_at: at(HOUR) }, { due_at: null, status: 'delivered' }, { due_at: at(2 * HOUR) }])
    await deliveries(env, b, [{ due_at: at(4 * HOUR) }, { due_at: at(-2 * HOUR), locked_by: 'wrk_a', locked_until: at(HOUR) }, { due_at: null, status: 'failed' }])
    for (const slice of [1, 2, 3, 1_000]) {
      assert.equal(await env.engine.countQueued(slice), 5, `slice ${slice}`)
      assert.equal(await env.engine.earliestDue(slice), at(-2 * HOUR), `chunk ${slice}`)
    }
    assert.equal(await env.engine.countQueued(), 5)
    assert.equal(await env.engine.earliestDue(), at(-2 * HOUR))
  })

  s.test('dropQueue() empties the queue of one inactive subscription: nothing due, pending ones failed (dropQueued()); other subscriptions keep theirs', async (env) => {
    const dropped = await insertWebhook(env.opened.db, env.tenantId, { active: 0 })
    const kept = await insertWebhook(env.opened.db, env.tenantId)
    const gone = await deliveries(env, dropped, [{}, { attempts: 2, status: 'pending', due_at: at(HOUR) }, { status: 'delivered', due_at: at(HOUR), manual: 1, attempts: 1 }])
    const stays = await deliveries(env, kept, [{}])
    await env.engine.dropQueue(env.tenantId, dropped)
    assert.deepEqual((await rowsOf(env.opened.db, gone)).map((r) => [r.status, r.due_at]), [['failed', null], ['failed', null], ['delivered', null]])
    assert.deepEqual((await rowsOf(env.opened.db, stays)).map((r) => [r.status, r.due_at]), [['pending', at(0)]])
  })
})

eachEngine('Engine.lockedForPrune(), retention\'s read', (s) => {
  const finished = (env: Env) => env.opened.db.selectFrom('deliveries').select('id').where('due_at', 'is', null).where('tenant_id', '=', env.tenantId).orderBy('id')

  if (s.name === 'sqlite') {
    s.test('reads the rows the query names, as it names them: one writer, so nothing runs beside a prune step', async (env) => {
      const webhook = await insertWebhook(env.opened.db, env.tenantId)
      const ids = await deliveries(env, webhook, [{ status: 'delivered', due_at: null }, { status: 'failed', due_at: null }])
      const q = finished(env)
      assert.equal(env.engine.lockedForPrune(q), q)
      assert.deepEqual(await env.engine.withTx(({ tx }) => env.engine.lockedForPrune(tx.selectFrom('deliveries').select('id').where('id', 'in', ids).orderBy('id')).execute()),
        ids.map((id) => ({ id })))
    })
  } else {
    s.test('locks the rows it reads and skips, without waiting, those another transaction holds (a retry queueing one again)', async (env) => {
      const webhook = await insertWebhook(env.opened.db, env.tenantId)
      const ids = await deliveries(env, webhook, [{ status: 'delivered', due_at: null }, { status: 'failed', due_at: null }])
      const other = await env.another()
      let release!: () => void
      const held = new Promise<void>((r) => (release = r))
      let holding!: () => void
      const holds = new Promise<void>((r) => (holding = r))
      const holder = other.db.transaction().execute(async (tx) => {
        await tx.updateTable('deliveries').set({ manual: 1 }).where('id', '=', ids[0]!).execute()
        holding()
        await held
      })
      await holds
      try {
        const read = await env.opened.db.transaction().execute((tx) => env.engine.lockedForPrune(tx.selectFrom('deliveries').select('id').where('id', 'in', ids).orderBy('id')).execute())
        assert.deepEqual(read, [{ id: ids[1] }])
      } finally {
        release()
        await holder
      }
    })
  }
})
