import assert from 'node:assert/strict'
import { DEFAULT_CONFIG } from '../../src/config.ts'
import type { Db } from '../../src/db/connect.ts'
import type { OpenDb } from '../../src/engine/port.ts'
import { withTx } from '../../src/engine/tx.ts'
import type { Claim, DeliveryStore, Job } from '../../src/delivery/port.ts'
import { emit } from '../../src/events/emit.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { startTestApp, type TestApp } from './app.ts'
import { openWithStore } from './engine.ts'

/**
 * A subscription row written straight into the database (behind the API's back, or as a request
 * never could): a loopback url, every event, no headers, active; `over` replaces any column.
 */
export async function insertWebhook(db: Db, tenantId: string, over: Record<string, unknown> = {}): Promise<string> {
  const now = new Date().toISOString()
  const row = {
    id: `wh_${crypto.randomUUID()}`, tenant_id: tenantId, url: 'http://127.0.0.1:9/', events: '["*"]', secret: 'store-test-secret',
    headers: '{}', active: 1, created_at: now, updated_at: now, ...over,
  }
  await db.insertInto('webhooks').values(row as never).execute()
  return row.id
}

/**
 * For the store tests that are the only worker of their database: a new subscription of the
 * tenant with `n` due order.created deliveries, all claimed by `owner` in one cycle, in the
 * order of their events.
 */
export async function claimedJobs(opened: OpenDb, store: DeliveryStore, t: { tenantId: string; keyId: string }, owner: string, n: number): Promise<Job[]> {
  const webhookId = await insertWebhook(opened.db, t.tenantId, { events: JSON.stringify(['order.created']) })
  const ctx = { db: opened.db, engine: opened.engine, clock: systemClock, config: DEFAULT_CONFIG, logger: createLogger('silent'), notify: () => {}, ...t }
  for (let i = 0; i < n; i++) await withTx(opened.engine, (scope) => emit(scope, ctx, 'order.created', { id: `ord_${i}` }))
  const claim: Claim = {
    now: new Date().toISOString(), leaseUntil: new Date(Date.now() + 60_000).toISOString(), owner,
    plan: (queued) => queued.filter((q) => q.webhook_id === webhookId).map((q) => ({ webhook_id: q.webhook_id, limit: n })),
  }
  const { jobs } = await store.cycle([], claim)
  assert.equal(jobs.length, n)
  return jobs.sort((a, b) => a.event_id.localeCompare(b.event_id))
}

/**
 * A database (of the suite's engine) with one tenant, whose serve has stopped, opened again
 * with its engine's delivery store: the test is the only worker. close() ends both.
 */
export async function storeUnderTest(): Promise<{ app: TestApp; opened: OpenDb; store: DeliveryStore; tenantId: string; keyId: string; close(): Promise<void> }> {
  const app = await startTestApp({ allowPrivateTargets: true })
  const t = await app.tenant()
  await app.server.stop(0)
  const { opened, store } = await openWithStore(app.dbFile)
  return { app, opened, store, tenantId: t.id, keyId: t.keyId, close: async () => { await opened.close(); await app.close() } }
}
