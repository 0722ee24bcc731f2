import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import pg from 'pg'
import { type OpenDb } from '../../src/engine/port.ts'
import { openDatabase } from '../../src/engine/open.ts'
import { pruneStep } from '../../src/engine/retention.ts'
import { newId } from '../../src/lib/ids.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { newPgDatabase, queryRows } from '../helpers/engine.ts'

// Retention (CONTRACT §11) on PostgreSQL runs beside the API in other transactions. A finished
// delivery that a client queues again (POST …/retry) while a retention step is deleting the
// expired ones must survive: it is queued, no longer finished. On SQLite one writer at a time
// makes the two run one after the other.

const DAY = 86_400_000
let url: string
let o: OpenDb

before(async () => {
  url = await newPgDatabase()
  o = await openDatabase(url, { create: true, migrate: true })
})
after(async () => {
  await o?.close()
})

test('a finished delivery queued again while a retention step runs is neither deleted nor stripped of its attempts', async () => {
  const tenantId = (await createTenant(o.db, 'Retry meets retention', new Date())).id
  const old = new Date(Date.now() - 3 * DAY).toISOString()
  const webhook = newId('wh')
  await o.db.insertInto('webhooks').values({
    id: webhook, tenant_id: tenantId, url: 'http://127.0.0.1:9/hook', events: '["*"]', secret: 'whsec_race_0123456789abcdef',
    headers: '{}', active: 1, retry_count: 3, created_at: old, updated_at: old,
  } as never).execute()
  const event = newId('evt')
  await o.db.insertInto('events').values({ id: event, tenant_id: tenantId, name: 'order.created', payload: '{}', created_at: old } as never).execute()
  const delivery = newId('del')
  await o.db.insertInto('deliveries').values({
    id: delivery, tenant_id: tenantId, webhook_id: webhook, event_id: event, event: 'order.created', status: 'delivered', attempts: 1, retries: 0,
    response_code: 200, created_at: old, delivered_at: old, last_attempt_at: old, next_retry_at: null, due_at: null, manual: 0,
  } as never).execute()
  await o.db.insertInto('delivery_attempts').values({
    delivery_id: delivery, attempt: 1, tenant_id: tenantId, at: old, trigger: 'auto', response_code: 200, duration_ms: 3, error: null, response_body: 'ok',
  } as never).execute()

  // The retry's transaction has queued the delivery again and not yet committed when the step starts.
  const retry = new pg.Client({ connectionString: url })
  await retry.connect()
  try {
    await retry.query('begin isolation level serializable')
    await retry.query('update deliveries set due_at = $1, manual = manual + 1 where id = $2', [new Date().toISOString(), delivery])
    const step = pruneStep(o.engine, new Date(Date.now() - DAY).toISOString())
    // Let the step run up to where it waits for the retry's row, or to its end.
    const waiting = async () => (await queryRows<{ n: number }>(url, "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'"))[0]!.n > 0
    let settled = false
    void step.then(() => (settled = true), () => (settled = true))
    for (const end = Date.now() + 2000; !settled && !(await waiting()) && Date.now() < end;) await new Promise((r) => setTimeout(r, 10))
    await retry.query('commit')
    await step
  } finally {
    await retry.end()
  }
  const rows = await queryRows<{ status: string; queued: boolean }>(url, 'select status, due_at is not null as queued from deliveries where id = ?', delivery)
  assert.deepEqual(rows, [{ status: 'delivered', queued: true }], 'the delivery queued again is still there, queued')
  const attempts = await queryRows<{ n: number }>(url, 'select count(*)::int as n from delivery_attempts where delivery_id = ?', delivery)
  assert.equal(attempts[0]!.n, 1, 'its attempts are kept')
})
