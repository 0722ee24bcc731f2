import { sql, type ExpressionBuilder } from 'kysely'
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import { subtractAttempts } from './attempt-stats.ts'
import type { Engine } from './port.ts'
import type { Database } from '../db/schema.ts'

/** Finished deliveries a prune step deletes at most (with their attempts and events), or events it looks at: one short write transaction, a few ms. */
export const PRUNE_BATCH = 200

const _finishedAt = sql<string>`coalesce(last_attempt_at, created_at)`

/** Where the walk over expired events stopped: the last event looked at. */
export interface EventCursor {
  createdAt: string
  id: string
}

export interface PruneResult {
  /** Rows deleted (deliveries, attempts, events). */
  deleted: number
  /** More may be left: the next step should follow at once. */
  more: boolean
  /** Where the next step's walk over events starts; null: from the oldest. */
  cursor: EventCursor | null
}

/**
 * One step of retention (CONTRACT §11), bounded whatever the backlog: up to PRUNE_BATCH finished
 * deliveries (nothing queued: delivered, or failed with no retry left) that finished before
 * `cutoff` go with their attempts (taken away from attempt_stats too, whose rows go once they
 * count none) and with those of their events that have no delivery left.
 * When no such delivery is left, the step instead looks at the next PRUNE_BATCH events older
 * than `cutoff` after `cursor` and deletes those without a delivery (events that never had one,
 * or lost theirs otherwise); its answer says where to go on from. Each statement reads a
 * bounded range of an index: a backlog of a million rows costs the same per step as one of ten.
 */
export async function pruneStep(engine: Engine, cutoff: string, cursor: EventCursor | null = null): Promise<PruneResult> {
  return engine.db.transaction().execute(async (tx) => {
    const noDelivery = (eb: ExpressionBuilder<Database, 'events'>) =>
      eb.not(eb.exists(eb.selectFrom('deliveries as d').select('d.id').whereRef('d.event_id', '=', 'events.id')))
    // Where the API writes beside this step (PostgreSQL) the rows are locked as they are read,
    // and one being queued again right now (a retry) is skipped, so it is not deleted once it is
    // no longer finished. (SQLite has one writer: nothing runs between these statements.)
    const done = await engine.lockedForPrune(tx.selectFrom('deliveries').select(['id', 'event_id'])
      .where('due_at', 'is', null).where(_finishedAt, '<', cutoff)
      .orderBy(_finishedAt).limit(PRUNE_BATCH)).execute()
    if (done.length > 0) {
      const ids = done.map((d) => d.id)
      // attempt_stats keeps equal to the attempts: what goes from one goes from the other.
      await subtractAttempts(tx, ids)
      let deleted = Number((await tx.deleteFrom('delivery_attempts').where('delivery_id', 'in', ids).executeTakeFirst()).numDeletedRows)
      deleted += Number((await tx.deleteFrom('deliveries').where('id', 'in', ids).executeTakeFirst()).numDeletedRows)
      const events = [...new Set(done.map((d) => d.event_id))]
      deleted += Number((await tx.deleteFrom('events').where('id', 'in', events).where('created_at', '<', cutoff)
        .where(noDelivery).executeTakeFirst()).numDeletedRows)
      return { deleted, more: true, cursor }
    }
    let window = tx.selectFrom('events').select(['id', 'created_at']).where('created_at', '<', cutoff)
    if (cursor) window = window.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(cursor.createdAt, cursor.id)))
    const seen = await window.orderBy('created_at').orderBy('id').limit(PRUNE_BATCH).execute()
    const last = seen[seen.length - 1]
    if (!last) return { deleted: 0, more: false, cursor: null }
    const deleted = Number((await tx.deleteFrom('events').where('id', 'in', seen.map((e) => e.id)).where(noDelivery).executeTakeFirst()).numDeletedRows)
    // A short window is the end of the walk: the next round starts from the oldest again.
    const full = seen.length === PRUNE_BATCH
    return { deleted, more: full, cursor: full ? { createdAt: last.created_at, id: last.id } : null }
  })
}

export interface Pruner {
  stop(): Promise<void>
}

/**
 * Runs retention in the background: a step, then the next one on the next macrotask while
 * there is work (requests are served between steps), else a pause of a tenth of the retention
 * (between 1 s and 60 s), so a record is gone within retention + 10 % and never more than a
 * minute late. `retentionMs` 0 keeps everything.
 */
export function startPruner(o: {
  engine: Engine
  retentionMs: number
  clock: Clock
  logger: Logger
  /** Waited on before each step: SQLite's checkpointer (engine/sqlite/checkpointer.ts) holds retention back while the WAL is full, so deletes never outrun the disk. */
  room?: () => Promise<void>
}): Pruner {
  if (o.retentionMs <= 0) return { stop: async () => {} }
  const pauseMs = Math.min(60_000, Math.max(1000, Math.floor(o.retentionMs / 10)))
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let stopped = false
  let cursor: EventCursor | null = null
  let unblock = () => {}
  const stopping = new Promise<void>((resolve) => (unblock = resolve))
  const step = async () => {
    let more = false
    try {
      if (o.room) await Promise.race([o.room(), stopping])
      if (stopped) return
      const r = await pruneStep(o.engine, new Date(o.clock.now().getTime() - o.retentionMs).toISOString(), cursor)
      more = r.more
      cursor = r.cursor
    } catch (err) {
      cursor = null
      o.logger.warn('retention step failed; trying again later', { error: String(err) })
    }
    if (stopped) return
    if (more) setImmediate(go)
    else timer = setTimeout(go, pauseMs).unref()
  }
  const go = () => {
    if (!stopped) running = step()
  }
  timer = setTimeout(go, Math.min(pauseMs, 1000)).unref()
  return {
    async stop() {
      stopped = true
      unblock()
      clearTimeout(timer)
      await running
    },
  }
}
