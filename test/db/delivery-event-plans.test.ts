import assert from 'node:assert/strict'
import { CompiledQuery, sql } from 'kysely'
import { newId } from '../../src/lib/ids.ts'
import { listDeliveries, type DeliveryFilter } from '../../src/modules/webhooks/repo.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { eachEngine, type Env } from '../engine/each-engine.ts'
import { recording, type PlanNode } from '../helpers/query-plans.ts'
import { insertWebhook } from '../helpers/store.ts'

// GET /v1/webhooks/deliveries?event_id=…: one event's deliveries are read through deliveries_event
// (migration 0007) on both engines, whatever other filter comes with it — never the tenant's
// deliveries in id order, which a LIMIT would tempt a planner into and which would read the
// tenant's whole history for an old event. Each statement the list runs is explained: SQLite's
// EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN ANALYZE once the table has statistics.

const EVENTS = 4_000
const SUBSCRIPTIONS = 3

eachEngine('one event\'s deliveries: their plans', (s) => {
  let tenantId: string
  let old: string
  let loaded = false
  const load = async (env: Env) => {
    if (loaded) return
    loaded = true
    tenantId = env.tenantId
    const other = (await createTenant(env.opened.db, 'Other', new Date())).id
    const base = Date.parse('2027-01-01T00:00:00.000Z')
    for (const t of [other, tenantId]) {
      const hooks = await Promise.all(Array.from({ length: SUBSCRIPTIONS }, () => insertWebhook(env.opened.db, t)))
      for (let from = 0; from < EVENTS; from += 500) {
        const events = Array.from({ length: 500 }, (_, k) => ({
          id: newId('evt'), tenant_id: t, name: 'order.created', payload: '{}', created_at: new Date(base + (from + k) * 1000).toISOString(),
        }))
        await env.opened.db.insertInto('events').values(events).execute()
        const deliveries = events.flatMap((e) => hooks.map((h) => ({
          id: newId('del'), tenant_id: t, webhook_id: h, event_id: e.id, event: e.name, status: 'delivered', attempts: 1, retries: 0, manual: 0, created_at: e.created_at,
        })))
        await env.opened.db.insertInto('deliveries').values(deliveries).execute()
        if (t === tenantId && from === 0) old = events[0]!.id
      }
    }
    if (env.name === 'postgres') await sql`vacuum analyze deliveries`.execute(env.opened.db)
  }

  const shapes: [string, Omit<DeliveryFilter, 'limit' | 'eventId'>][] = [
    ['the event alone', {}],
    ['and a status', { status: 'delivered' }],
    ['and a time', { createdAfter: '2026-01-01T00:00:00.000Z' }],
    ['and a subscription', { webhookId: 'wh_00000000-0000-7000-8000-000000000000' }],
    ['after a cursor', { after: 'del_ffffffff-ffff-7fff-bfff-ffffffffffff' }],
  ]
  for (const [what, filter] of shapes) {
    s.test(`the tenant's oldest event, ${what}: deliveries_event only`, async (env) => {
      await load(env)
      const recorded = await recording(env.opened.db, (db) => listDeliveries(db, tenantId, { ...filter, eventId: old, limit: 20 }))
      assert.equal(recorded.rows.length, filter.webhookId ? 0 : SUBSCRIPTIONS)
      assert.ok(recorded.rows.every((r) => r.event_id === old && r.tenant_id === tenantId))
      assert.equal(recorded.statements.length, 1, 'one statement: no windows')
      for (const q of recorded.statements) {
        if (env.name === 'sqlite') {
          const plan = (await env.opened.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${q.sql}`, [...q.parameters]))).rows.map((r) => r.detail)
          const deliveries = plan.filter((d) => /\bdeliveries\b/.test(d))
          assert.equal(deliveries.length, 1, plan.join(' | '))
          assert.match(deliveries[0]!, /^SEARCH deliveries USING INDEX deliveries_event \(event_id=\?\)$/, plan.join(' | '))
        } else {
          const plan = (await env.opened.db.executeQuery<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(CompiledQuery.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${q.sql}`, [...q.parameters]))).rows[0]!['QUERY PLAN'][0]!.Plan
          const read = rowsRead(plan)
          assert.deepEqual(read.scans, ['deliveries_event'], `${what}: ${JSON.stringify(plan)}`)
          assert.ok(read.rows <= SUBSCRIPTIONS, `${what}: ${read.rows} rows of deliveries read`)
        }
      }
    })
  }
})

/** The indexes that read `deliveries` in a plan (a bitmap's too) and the rows read of it (returned and filtered out, over every loop). */
function rowsRead(plan: PlanNode): { scans: string[]; rows: number } {
  const scans: string[] = []
  let rows = 0
  const walk = (n: PlanNode) => {
    if (n['Relation Name'] === 'deliveries') {
      if (n['Index Name']) scans.push(n['Index Name'])
      else if (n['Node Type'] !== 'Bitmap Heap Scan') scans.push(n['Node Type'])
      rows += (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops']
    }
    if (n['Node Type'] === 'Bitmap Index Scan') scans.push(n['Index Name']!)
    for (const child of n.Plans ?? []) walk(child)
  }
  walk(plan)
  return { scans, rows }
}
