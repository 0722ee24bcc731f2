import assert from 'node:assert/strict'
import { CompiledQuery, sql } from 'kysely'
import { newId } from '../../src/lib/ids.ts'
import { listEvents, type EventFilter } from '../../src/modules/events/repo.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { eachEngine, type Env } from '../engine/each-engine.ts'
import { recording, type PlanNode } from '../helpers/query-plans.ts'

// GET /v1/events reads through an index on both engines (CONTRACT §15; migrations 0019): every
// event by (tenant_id, id), one name or several by (tenant_id, name, id) — each statement reading
// about a page of index entries whatever the table holds, never other tenants' events — and a time
// range in windows of the tenant's (or the name's) range, never a scan of the table. Each
// statement the list runs is recorded and explained: SQLite's EXPLAIN QUERY PLAN, PostgreSQL's
// EXPLAIN ANALYZE once autovacuum has been over the data. The tenant's events all come after the
// other tenant's: reading the primary key in id order and skipping the other tenant's events would
// read them all, which is what each statement must not do.

const PER_TENANT = 12_000
const RARE = 'inquiry.created'
const NAMES = ['order.created', 'order.updated', 'customer.created']

eachEngine('the events list\'s plans', (s) => {
  let tenantId: string
  let loaded = false
  const load = async (env: Env) => {
    if (loaded) return
    loaded = true
    tenantId = env.tenantId
    const other = (await createTenant(env.opened.db, 'Other', new Date())).id
    const base = Date.parse('2027-01-01T00:00:00.000Z')
    for (const t of [other, tenantId]) {
      for (let from = 0; from < PER_TENANT; from += 1000) {
        const rows = Array.from({ length: 1000 }, (_, k) => {
          const i = from + k
          const name = i % 1000 === 7 ? RARE : NAMES[i % NAMES.length]!
          return { id: newId('evt'), tenant_id: t, name, payload: '{}', created_at: new Date(base + i * 1000).toISOString() }
        })
        await env.opened.db.insertInto('events').values(rows).execute()
      }
    }
    // What autovacuum does to a table that is only inserted into (PostgreSQL 13+): statistics, and
    // the visibility map that lets an index serve the ids alone.
    if (env.name === 'postgres') await sql`vacuum analyze events`.execute(env.opened.db)
  }

  const shapes: [string, Omit<EventFilter, 'limit' | 'order'>][] = [
    ['every event', {}],
    ['one name', { names: ['order.created'] }],
    ['a rare name', { names: [RARE] }],
    ['several names', { names: ['order.updated', RARE] }],
    ['a time range', { createdAfter: '2027-01-01T01:00:00.000Z', createdBefore: '2027-01-01T02:00:00.000Z' }],
    ['a time range and a name', { names: ['customer.created'], createdAfter: '2027-01-01T01:00:00.000Z' }],
  ]
  for (const [what, filter] of shapes) {
    for (const order of ['desc', 'asc'] as const) {
      s.test(`${what}, ${order === 'desc' ? 'newest' : 'oldest'} first: index reads only`, async (env) => {
        await load(env)
        const recorded = await recording(env.opened.db, (db) => listEvents(db, tenantId, { ...filter, order, limit: 20 }))
        assert.ok(recorded.rows.length > 0, 'a page')
        for (const q of recorded.statements) {
          if (env.name === 'sqlite') {
            const plan = (await env.opened.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${q.sql}`, [...q.parameters]))).rows.map((r) => r.detail)
            const events = plan.filter((d) => /\bevents\b|\b(SCAN|SEARCH) r\b/.test(d))
            assert.ok(events.length > 0, plan.join(' | '))
            for (const d of events) assert.match(d, /^SEARCH .*USING (COVERING )?INDEX events_tenant(_name)? |^SEARCH .*USING INTEGER PRIMARY KEY|^SEARCH events USING INDEX sqlite_autoindex_events_1 |^SCAN r$/, `${what}: ${plan.join(' | ')}`)
            if (!filter.createdAfter && !filter.names?.[1]) assert.ok(!plan.some((d) => /TEMP B-TREE/.test(d)), `${what}: read in id order: ${plan.join(' | ')}`)
          } else {
            const plan = (await env.opened.db.executeQuery<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(CompiledQuery.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${q.sql}`, [...q.parameters]))).rows[0]!['QUERY PLAN'][0]!.Plan
            const read = rowsRead(plan)
            assert.ok(read.scans.length > 0 && read.scans.every((x) => /^Index (Only )?Scan (Backward )?on events_(tenant|tenant_name|pkey)$/.test(x)), `${what}: ${read.scans.join(', ')}`)
            // A page (21 rows) per name, then the page's rows by id. A time range's windows are left
            // to the planner: it may read a window's id range by the primary key, past other tenants'
            // events in that range, as for every list read in windows (docs/decisions/0062-events-api.md).
            if (!filter.createdAfter) assert.ok(read.rows <= 21 * (filter.names?.length ?? 1) + 21, `${what}: ${read.rows} rows of events read (${read.scans.join(', ')})`)
          }
        }
      })
    }
  }
})

/** The scans of `events` in a plan and the rows they read (returned and filtered out, over every loop). */
function rowsRead(plan: PlanNode): { scans: string[]; rows: number } {
  const scans: string[] = []
  let rows = 0
  const walk = (n: PlanNode) => {
    if (n['Relation Name'] === 'events') {
      scans.push(`${n['Node Type']}${n['Index Name'] ? ` on ${n['Index Name']}` : ''}`)
      rows += (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops']
    }
    if (n['Node Type'] === 'Bitmap Index Scan') scans.push(`Bitmap Index Scan on ${n['Index Name']}`)
    for (const child of n.Plans ?? []) walk(child)
  }
  walk(plan)
  return { scans, rows }
}
