import type { ExpressionBuilder } from 'kysely'
import type { Db } from '../db/connect.ts'
import type { Database } from '../db/schema.ts'
import { windowFloor } from '../db/tenant-table.ts'

/**
 * What a requeue needs of the caller: the database, and the engine's rerunOnConflict()
 * (engine/port.ts: a TenantContext or an OpenDb has both).
 */
export interface Requeuer {
  db: Db
  engine: { rerunOnConflict<T>(run: () => Promise<T>): Promise<T> }
}

export interface RequeueFilter {
  /** Only these deliveries (any tenant: the CLI is the operator's tool). */
  ids?: string[]
  webhookId?: string
  since?: string
  status?: 'failed' | 'delivered'
}

/**
 * Queues an immediate new attempt ("manual") for delivered or failed records whose
 * subscription is still active. The automatic retry schedule is left as it is: after a
 * manual attempt fails, the next automatic retry (if any) keeps its time. `manual` counts
 * requests not yet served, so one made while an attempt is in flight is not lost (the worker
 * subtracts what it claimed). Returns the ids queued.
 */
export async function requeueDeliveries({ db, engine }: Requeuer, filter: RequeueFilter, now: Date): Promise<string[]> {
  // The statement takes its rows in its own order while the worker records answers in another:
  // where that can end it as a deadlock's victim, the engine runs it again (one statement:
  // nothing of the failed try remains).
  const rows = await engine.rerunOnConflict(() => db.updateTable('deliveries')
    .set((eb) => ({ due_at: now.toISOString(), manual: eb('manual', '+', 1) }))
    .where(_matching(filter))
    .returning('id')
    .execute())
  return rows.map((r) => r.id)
}

/** A subscription's finished deliveries to queue again (replay): the subscription's tenant, its id, and the filters of RequeueFilter. */
export interface ReplayFilter {
  tenantId: string
  webhookId: string
  since?: string
  status?: 'failed' | 'delivered'
}

/** Deliveries a replay's statement queues at most (~20 ms of SQLite's time), and a count reads at most. */
const _QUEUE_WINDOW = 2_000
const _COUNT_WINDOW = 20_000

/**
 * Queues a new attempt of every matching delivery of one subscription (API and CLI replay),
 * as requeueDeliveries() does, but window by window: each statement takes at most 2,000 of the
 * subscription's deliveries, newest first (one index range), and other requests run between two.
 * One statement over the lot held every tenant's requests on SQLite for as long as it ran (4.9 s
 * for 500,000 deliveries), and the CLI's held serve's writes. Each window is its own transaction:
 * a replay cut short by a stop has queued the windows before it. Returns how many were queued.
 */
export async function replayDeliveries({ db, engine }: Requeuer, filter: ReplayFilter, now: Date): Promise<number> {
  const match = _matching({ webhookId: filter.webhookId, since: filter.since, status: filter.status })
  let queued = 0
  await _windows(db, filter, _QUEUE_WINDOW, async (below, floor) => {
    const r = await engine.rerunOnConflict(() => db.updateTable('deliveries')
      .set((eb) => ({ due_at: now.toISOString(), manual: eb('manual', '+', 1) }))
      .where('tenant_id', '=', filter.tenantId)
      .where(match)
      .$if(below !== undefined, (q) => q.where('id', '<', below!))
      .$if(floor !== undefined, (q) => q.where('id', '>=', floor!))
      .executeTakeFirst())
    queued += Number(r.numUpdatedRows)
  })
  return queued
}

/** How many deliveries replayDeliveries() would queue now; changes nothing. Read in windows too. */
export async function countReplayable(db: Db, filter: ReplayFilter): Promise<number> {
  const match = _matching({ webhookId: filter.webhookId, since: filter.since, status: filter.status })
  let n = 0
  await _windows(db, filter, _COUNT_WINDOW, async (below, floor) => {
    const row = await db.selectFrom('deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', filter.tenantId)
      .where(match)
      .$if(below !== undefined, (q) => q.where('id', '<', below!))
      .$if(floor !== undefined, (q) => q.where('id', '>=', floor!))
      .executeTakeFirstOrThrow()
    n += Number(row.n)
  })
  return n
}

/** The subscription's deliveries in windows of `size`, newest first: [floor, below) each, the last with no floor. */
async function _windows(db: Db, filter: ReplayFilter, size: number, each: (below: string | undefined, floor: string | undefined) => Promise<void>): Promise<void> {
  const floorOf = windowFloor(db, 'deliveries', filter.tenantId, { webhook_id: filter.webhookId })
  let below: string | undefined
  for (;;) {
    const floor = await floorOf(below, size)
    await each(below, floor)
    if (floor === undefined) return
    below = floor
    await new Promise((resolve) => setImmediate(resolve))
  }
}

/** The one definition of "requeueable" that both the update and the count use. */
function _matching(filter: RequeueFilter) {
  return (eb: ExpressionBuilder<Database, 'deliveries'>) => {
    const all = [
      eb('status', 'in', filter.status ? [filter.status] : ['failed', 'delivered']),
      eb('webhook_id', 'in', eb.selectFrom('webhooks').select('id').where('active', '=', 1).where('deleted_at', 'is', null)),
    ]
    if (filter.ids) all.push(eb('id', 'in', filter.ids.length ? filter.ids : ['']))
    if (filter.webhookId) all.push(eb('webhook_id', '=', filter.webhookId))
    if (filter.since) all.push(eb('created_at', '>=', filter.since))
    return eb.and(all)
  }
}
