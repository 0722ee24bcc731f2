import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { PRUNE_BATCH, pruneStep, startPruner, type EventCursor } from '../../src/engine/retention.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { createLogger } from '../../src/lib/logger.ts'
import type { OpenDb } from '../../src/engine/port.ts'
import { newId } from '../../src/lib/ids.ts'
import { insertWebhook, storeUnderTest } from '../helpers/store.ts'

// §11 retention, step by step, on the suite's engine: each step is bounded (one batch of
// finished deliveries with their attempts and events, or one window of expired events), and
// the steps together delete exactly what has expired. The cost of a step at a million rows is
// the benchmark's figure (`retention-p99`); here, what is deleted and what is kept.

const DAY = 86_400_000
let env: Awaited<ReturnType<typeof storeUnderTest>>
before(async () => { env = await storeUnderTest() })
after(async () => { await env.close() })

const at = (ms: number) => new Date(ms).toISOString()

/** An event created at `created`, with one delivery per entry of `deliveries` (finished at that time, or queued when null), each finished one with its attempt. */
async function event(o: OpenDb, tenantId: string, webhook: string, created: string, deliveries: (string | null)[]): Promise<string> {
  const id = newId('evt')
  await o.db.insertInto('events').values({ id, tenant_id: tenantId, name: 'order.created', payload: '{}', created_at: created } as never).execute()
  for (const finished of deliveries) {
    const del = newId('del')
    await o.db.insertInto('deliveries').values({
      id: del, tenant_id: tenantId, webhook_id: webhook, event_id: id, event: 'order.created', status: finished ? 'delivered' : 'pending',
      attempts: finished ? 1 : 0, retries: 0, response_code: finished ? 200 : null, created_at: created, delivered_at: finished, last_attempt_at: finished,
      next_retry_at: finished ? null : at(Date.now() + DAY), due_at: finished ? null : at(Date.now() + DAY), manual: 0,
    } as never).execute()
    if (finished) {
      await o.db.insertInto('delivery_attempts').values({
        delivery_id: del, attempt: 1, tenant_id: tenantId, at: finished, trigger: 'auto', response_code: 200, duration_ms: 3, error: null, response_body: 'ok',
      } as never).execute()
    }
  }
  return id
}

async function count(o: OpenDb, table: 'events' | 'deliveries' | 'delivery_attempts', tenantId: string): Promise<number> {
  const r = await o.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('tenant_id', '=', tenantId).executeTakeFirstOrThrow()
  return Number(r.n)
}

test('retention steps delete every expired finished delivery, its attempts and events, and every expired event without one; each step is one batch', async () => {
  const o = env.opened
  const t = env.tenantId
  const webhook = await insertWebhook(o.db, t)
  const old = Date.now() - 3 * DAY
  // The oldest event has a delivery still queued: it stays, and the walk over events goes past it.
  const queued = await event(o, t, webhook, at(old - DAY), [null])
  // 1.25 batches of expired events with two finished deliveries each (one finished recently: that event stays).
  let recentlyFinished = ''
  for (let i = 0; i < 125; i++) {
    const id = await event(o, t, webhook, at(old + i), [at(old + i + 10), i === 7 ? at(Date.now()) : at(old + i + 20)])
    if (i === 7) recentlyFinished = id
  }
  // 2.5 windows of expired events that never had a delivery, most of them sharing one created_at:
  // the walk's position is (created_at, id), so a tie larger than a window is walked through.
  const noDeliveries: string[] = []
  for (let i = 0; i < Math.round(2.5 * PRUNE_BATCH); i++) noDeliveries.push(await event(o, t, webhook, at(old + 1000 + (i < 50 ? i : 50)), []))
  // Recent events and deliveries stay.
  for (let i = 0; i < 3; i++) await event(o, t, webhook, at(Date.now() - 1000), [at(Date.now() - 500), at(Date.now() - 400)])

  const cutoff = at(Date.now() - DAY)
  let cursor: EventCursor | null = null
  const steps: number[] = []
  for (;;) {
    const r = await pruneStep(o.engine, cutoff, cursor)
    steps.push(r.deleted)
    assert.ok(r.deleted <= 3 * PRUNE_BATCH, `a step deletes one batch of deliveries with their attempts and events, or one window of events: ${r.deleted}`)
    cursor = r.cursor
    if (!r.more) break
    assert.ok(steps.length < 20, `retention finishes: ${steps.join(', ')}`)
  }
  // 249 finished deliveries (2 batches), then 3 windows of events (the last one short).
  assert.deepEqual(steps.length, 5, `steps: ${steps.join(', ')}`)
  assert.equal(cursor, null, 'a finished walk starts from the oldest next time')

  const events = await o.db.selectFrom('events').select('id').where('tenant_id', '=', t).execute()
  const kept = new Set(events.map((e) => e.id))
  assert.ok(kept.has(queued), 'the event of a queued delivery stays')
  assert.ok(kept.has(recentlyFinished), 'an event with a delivery finished within the retention stays')
  assert.equal(noDeliveries.filter((id) => kept.has(id)).length, 0, 'every expired event without a delivery is gone')
  assert.equal(kept.size, 1 + 1 + 3)
  assert.equal(await count(o, 'deliveries', t), 1 + 1 + 6)
  assert.equal(await count(o, 'delivery_attempts', t), 1 + 6)
  const orphans = await o.db.selectFrom('delivery_attempts as a').select('a.delivery_id')
    .where((eb) => eb.not(eb.exists(eb.selectFrom('deliveries as d').select('d.id').whereRef('d.id', '=', 'a.delivery_id')))).execute()
  assert.equal(orphans.length, 0, 'no attempt outlives its delivery')

  // Nothing left to do: one step says so.
  assert.deepEqual(await pruneStep(o.engine, cutoff, null), { deleted: 0, more: false, cursor: null })
})

test('the pruner takes no step while room() holds it back (a full WAL, checkpointer.ts), goes on once given room, and stops while held', async () => {
  const o = env.opened
  const t = env.tenantId
  const webhook = await insertWebhook(o.db, t)
  const kept = await count(o, 'deliveries', t)
  await event(o, t, webhook, at(Date.now() - 3 * DAY), [at(Date.now() - 3 * DAY + 10)])
  const gates: (() => void)[] = []
  const room = () => new Promise<void>((resolve) => gates.push(resolve))
  const pruner = startPruner({ engine: o.engine, retentionMs: DAY, clock: systemClock, logger: createLogger('silent'), room })
  try {
    const until = Date.now() + 5_000
    while (gates.length === 0 && Date.now() < until) await sleep(20)
    assert.equal(gates.length, 1, 'the first step asked for room')
    await sleep(100)
    assert.equal(await count(o, 'deliveries', t), kept + 1, 'nothing deleted while held back')
    gates[0]!()
    while (gates.length < 2 && Date.now() < until) await sleep(20)
    assert.equal(await count(o, 'deliveries', t), kept, 'the expired delivery went in the step given room')
  } finally {
    await pruner.stop() // held back again by the second gate, never opened
  }
})
