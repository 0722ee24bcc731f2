import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { RawNode, sql, type KyselyPlugin, type RootOperationNode } from 'kysely'
import type { Db } from '../../src/db/connect.ts'
import type { OpenDb } from '../../src/engine/port.ts'
import { openDatabase } from '../../src/engine/open.ts'
import { DROP_BATCH } from '../../src/db/drop-queue.ts'
import { pgDropBatch } from '../../src/engine/postgres/drop-queue.ts'
import type { PostgresEngine } from '../../src/engine/postgres/engine.ts'
import { claimRows, queuedWebhooks } from '../../src/engine/postgres/delivery-store.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { newPgDatabase } from '../helpers/engine.ts'
import { insertWebhook } from '../helpers/store.ts'
import type { PlanNode } from '../helpers/query-plans.ts'

// The delivery engine's two reads of the queue on PostgreSQL — which subscriptions have due work,
// and the claim — must cost the batch, not the backlog (issue 15), whatever the planner's
// statistics say: taken while the queue was empty (as after a quiet night, or before a receiver
// went down) with 20,000 deliveries queued since, or taken of the backlog itself. The statements
// are run as the store runs them (its connections, its settings) under EXPLAIN ANALYZE, and the
// rows every scan of `deliveries` read are counted from the plan.
for (const stats of ['an empty queue', 'the backlog'] as const) describe(`the delivery store's plans on PostgreSQL: a backlog of 20,000, statistics of ${stats}`, () => {
  const BACKLOG = 20_000
  let opened: OpenDb
  let webhooks: string[]
  let tenantId: string
  before(async () => {
    opened = await openDatabase(await newPgDatabase(), { create: true, migrate: true })
    const db = opened.db
    tenantId = (await createTenant(db, 'Backlog', new Date())).id
    webhooks = [await insertWebhook(db, tenantId), await insertWebhook(db, tenantId)]
    await sql`alter table deliveries set (autovacuum_enabled = false)`.execute(db)
    await sql`alter table events set (autovacuum_enabled = false)`.execute(db)
    if (stats === 'an empty queue') await sql`analyze deliveries, events`.execute(db)
    const due = new Date(Date.now() - 60_000).toISOString()
    await sql`insert into events (id, tenant_id, name, payload, created_at)
      select 'evt_' || n, ${tenantId}, 'order.created', '{}', ${due} from generate_series(1, ${BACKLOG / 2}) n`.execute(db)
    await sql`insert into deliveries (id, tenant_id, webhook_id, event_id, event, status, attempts, retries, manual, created_at, due_at)
      select 'del_' || h.i || '_' || n, ${tenantId}, h.id, 'evt_' || n, 'order.created', 'pending', 0, 0, 0, ${due}, ${due}
      from generate_series(1, ${BACKLOG / 2}) n, unnest(${webhooks}::text[]) with ordinality h(id, i)`.execute(db)
    if (stats === 'the backlog') await sql`analyze deliveries, events`.execute(db)
  })
  after(() => opened?.close())

  test('reading which subscriptions have due work touches a few rows per subscription, not the backlog', async () => {
    const plans = await explained((opened.engine as PostgresEngine).deliveryDb, (db) => queuedWebhooks(db, new Date().toISOString()))
    const read = rowsRead(plans[0])
    assert.ok(read.scans.every((s) => !/Bitmap|Seq Scan/.test(s)), `index scans only: ${read.scans.join(', ')}`)
    assert.ok(read.rows <= 200, `${read.rows} rows of deliveries read for 2 subscriptions with ${BACKLOG} queued`)
  })

  test('a claim of 16 touches about 16 rows, not the backlog', async () => {
    const now = new Date().toISOString()
    const claim = { now, leaseUntil: new Date(Date.now() + 15_000).toISOString(), owner: 'wrk_plans', plan: () => [] }
    const plans = await explained((opened.engine as PostgresEngine).deliveryDb, (db) => claimRows(db, webhooks.map((h) => ({ webhook_id: h, limit: 8 })), claim, []))
    const read = rowsRead(plans[0])
    assert.ok(read.scans.every((s) => !/Bitmap|Seq Scan/.test(s)), `index scans only: ${read.scans.join(', ')}`)
    assert.ok(read.rows <= 200, `${read.rows} rows of deliveries read to claim 16 of ${BACKLOG}`)
    const claimed = await opened.db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('locked_by', '=', 'wrk_plans').executeTakeFirstOrThrow()
    assert.equal(Number(claimed.n), 16, 'the statement ran (EXPLAIN ANALYZE executes it) and claimed 8 of each subscription')
  })

  test('one statement of a queue drop touches its batch, not the backlog (last: it makes a subscription inactive)', async () => {
    await opened.db.updateTable('webhooks').set({ active: 0 }).where('id', '=', webhooks[1]!).execute()
    let dropped = 0
    const plans = await explained((opened.engine as PostgresEngine).deliveryDb, async (db) => (dropped = await pgDropBatch(db, tenantId, webhooks[1]!)))
    const read = rowsRead(plans[0])
    assert.ok(read.scans.every((s) => !/Bitmap|Seq Scan/.test(s)), `index scans only: ${read.scans.join(', ')}`)
    // Each of the batch twice: its index entry (which ids), then its row (the update).
    assert.ok(read.rows <= 2 * DROP_BATCH + 200, `${read.rows} rows of deliveries read to drop ${DROP_BATCH} of ${BACKLOG / 2}`)
    assert.equal(dropped, 0, 'EXPLAIN answers no row count') // the statement ran: the queue is shorter by a batch
    const left = await opened.db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('webhook_id', '=', webhooks[1]!).where('due_at', 'is not', null).executeTakeFirstOrThrow()
    assert.equal(Number(left.n), BACKLOG / 2 - DROP_BATCH)
  })
})

/** Runs `run` with every raw statement it sends prefixed by EXPLAIN (ANALYZE, FORMAT JSON); the plans, in order. */
async function explained(db: Db, run: (db: Db) => Promise<unknown>): Promise<PlanNode[]> {
  const plans: PlanNode[] = []
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }): RootOperationNode => {
      if (!RawNode.is(node)) throw new Error(`not a raw statement: ${node.kind}`)
      const [first = '', ...rest] = node.sqlFragments
      return RawNode.create([`explain (analyze, format json) ${first}`, ...rest], node.parameters) as unknown as RootOperationNode
    },
    transformResult: async ({ result }) => {
      for (const row of result.rows) plans.push(((row as Record<string, unknown>)['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan)
      return { ...result, rows: [] }
    },
  }
  await run(db.withPlugin(plugin))
  assert.ok(plans.length > 0, 'a statement was explained')
  return plans
}

/** The scans of `deliveries` in a plan, and the rows they read in all (returned and filtered out, over every loop). */
function rowsRead(plan: PlanNode | undefined): { scans: string[]; rows: number } {
  const scans: string[] = []
  let rows = 0
  const walk = (n: PlanNode) => {
    if (n['Relation Name'] === 'deliveries') {
      scans.push(`${n['Node Type']}${n['Index Name'] ? ` on ${n['Index Name']}` : ''}`)
      rows += (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0)) * n['Actual Loops']
    }
    // A bitmap index scan names no relation: what it read counts as read from deliveries.
    if (n['Node Type'] === 'Bitmap Index Scan' && n['Index Name']?.startsWith('deliveries')) {
      scans.push(`Bitmap Index Scan on ${n['Index Name']}`)
      rows += n['Actual Rows'] * n['Actual Loops']
    }
    for (const child of n.Plans ?? []) walk(child)
  }
  assert.ok(plan, 'a plan')
  walk(plan)
  return { scans, rows }
}
