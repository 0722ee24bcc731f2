import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { DEFAULT_CONFIG } from '../../src/config.ts'
import { withTx } from '../../src/engine/tx.ts'
import type { Claim } from '../../src/delivery/port.ts'
import { emit } from '../../src/events/emit.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { insertWebhook, storeUnderTest } from '../helpers/store.ts'

// The claim at the store, on the suite's engine: a subscription the planner saw with due
// deliveries but that stopped being active before the claim (paused or deleted by a request in
// between) gets nothing sent; its due deliveries leave the queue, never-attempted ones `failed`,
// while another subscription in the same claim is served as usual.

let env: Awaited<ReturnType<typeof storeUnderTest>>
before(async () => { env = await storeUnderTest() })
after(async () => { await env.close() })

test('a claim sends nothing for a subscription that is no longer active and drops its due deliveries; the live one in the same claim is claimed', async () => {
  const { opened, store, tenantId, keyId } = env
  const webhook = () => insertWebhook(opened.db, tenantId, { events: JSON.stringify(['order.created']), secret: 'store-claim-secret', headers: '{"X-Test":"1"}' })
  const webhooks = [await webhook(), await webhook()]
  const ctx = { db: opened.db, engine: opened.engine, clock: systemClock, config: DEFAULT_CONFIG, logger: createLogger('silent'), notify: () => {}, tenantId, keyId }
  for (let i = 0; i < 3; i++) await withTx(opened.engine, (scope) => emit(scope, ctx, 'order.created', { id: `ord_${i}` }))
  const [paused, live] = webhooks as [string, string]
  // Paused behind the planner's back: the queue still holds its 3 due deliveries.
  await opened.db.updateTable('webhooks').set({ active: 0 } as never).where('id', '=', paused).execute()

  const claim: Claim = {
    now: new Date().toISOString(), leaseUntil: new Date(Date.now() + 60_000).toISOString(), owner: 'store-claim-test',
    plan: (queued) => queued.filter((q) => webhooks.includes(q.webhook_id)).map((q) => ({ webhook_id: q.webhook_id, limit: 10 })),
  }
  const { jobs } = await store.cycle([], claim)
  assert.deepEqual(jobs.map((j) => j.webhook_id), [live, live, live], 'only the live subscription\'s deliveries are claimed')
  assert.deepEqual(jobs[0]!.headers, { 'X-Test': '1' }, 'a claimed job carries its subscription\'s headers')
  assert.equal(jobs[0]!.secret, 'store-claim-secret')

  const rows = await opened.db.selectFrom('deliveries').select(['webhook_id', 'status', 'due_at', 'locked_until'])
    .where('webhook_id', 'in', webhooks).execute()
  const of = (id: string) => rows.filter((r) => r.webhook_id === id)
  assert.deepEqual(of(paused).map((r) => [r.status, r.due_at, r.locked_until]), Array(3).fill(['failed', null, null]), 'the paused subscription\'s due deliveries leave the queue, failed')
  assert.ok(of(live).every((r) => r.status === 'pending' && r.due_at !== null && r.locked_until !== null), 'the live ones are leased')
})

test('a claim given the subscriptions to plan from (the worker\'s fast path) claims from those only; excluded deliveries are left alone whatever their lease says', async () => {
  const { opened, store, tenantId, keyId } = env
  await opened.db.updateTable('webhooks').set({ active: 0 } as never).where('tenant_id', '=', tenantId).execute()
  const webhook = () => insertWebhook(opened.db, tenantId, { events: JSON.stringify(['order.created']) })
  const [named, other] = [await webhook(), await webhook()] as [string, string]
  const ctx = { db: opened.db, engine: opened.engine, clock: systemClock, config: DEFAULT_CONFIG, logger: createLogger('silent'), notify: () => {}, tenantId, keyId }
  for (let i = 0; i < 3; i++) await withTx(opened.engine, (scope) => emit(scope, ctx, 'order.created', { id: `ord_${i}` }))
  const ofWebhook = (id: string) => opened.db.selectFrom('deliveries').select(['id', 'locked_by']).where('webhook_id', '=', id).orderBy('id').execute()
  // One of the named subscription's deliveries: a lease of ours that ran out while its attempt was still being recorded.
  const [stale] = await ofWebhook(named)
  await opened.db.updateTable('deliveries').set({ locked_by: 'store-claim-fast', locked_until: new Date(Date.now() - 1000).toISOString() } as never)
    .where('id', '=', stale!.id).execute()
  const now = new Date().toISOString()
  const seen: string[][] = []
  const claim: Claim = {
    now, leaseUntil: new Date(Date.now() + 60_000).toISOString(), owner: 'store-claim-fast',
    queued: [{ webhook_id: named, tenant_id: tenantId, due: now, ready: 3 }],
    exclude: [stale!.id],
    plan: (queued) => {
      seen.push(queued.map((q) => q.webhook_id))
      return queued.map((q) => ({ webhook_id: q.webhook_id, limit: 10 }))
    },
  }
  const { jobs } = await store.cycle([], claim)
  assert.deepEqual(seen, [[named]], 'planned once, from the subscriptions given: the queue (where the other one waits too) was not read')
  assert.equal(jobs.length, 2)
  assert.ok(jobs.every((j) => j.webhook_id === named && j.id !== stale!.id), 'the excluded delivery is not claimed again')
  assert.ok((await ofWebhook(other)).every((r) => r.locked_by === null), 'nothing of the subscription not named is claimed')
})
