import { sql } from 'kysely'
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/logger.ts'
import type { Db } from './connect.ts'

/** Rows a prune step deletes at most: one short write transaction, a few ms. */
export const PRUNE_BATCH = 200

const _finishedAt = sql<string>`coalesce(last_attempt_at, created_at)`

/**
 * One step of retention (CONTRACT §11): up to PRUNE_BATCH finished deliveries (nothing queued:
 * delivered, or failed with no retry left) that finished before `cutoff` go with their attempts,
 * then the events older than `cutoff` that have no delivery left (those of these deliveries and
 * those that never had one). Returns how many rows it deleted; 0 means nothing is left to do.
 */
export async function pruneStep(db: Db, cutoff: string): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const done = await tx.selectFrom('deliveries').select(['id', 'event_id'])
      .where('due_at', 'is', null).where(_finishedAt, '<', cutoff)
      .orderBy(_finishedAt).limit(PRUNE_BATCH).execute()
    let deleted = 0
    if (done.length > 0) {
      const ids = done.map((d) => d.id)
      deleted += Number((await tx.deleteFrom('delivery_attempts').where('delivery_id', 'in', ids).executeTakeFirst()).numDeletedRows)
      deleted += Number((await tx.deleteFrom('deliveries').where('id', 'in', ids).executeTakeFirst()).numDeletedRows)
    }
    const orphans = await tx.selectFrom('events as e').select('e.id')
      .where('e.created_at', '<', cutoff)
      .where((eb) => eb.not(eb.exists(eb.selectFrom('deliveries as d').select('d.id').whereRef('d.event_id', '=', 'e.id'))))
      .orderBy('e.created_at').limit(PRUNE_BATCH).execute()
    if (orphans.length > 0) {
      deleted += Number((await tx.deleteFrom('events').where('id', 'in', orphans.map((e) => e.id)).executeTakeFirst()).numDeletedRows)
    }
    return deleted
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
export function startPruner(o: { db: Db; retentionMs: number; clock: Clock; logger: Logger }): Pruner {
  if (o.retentionMs <= 0) return { stop: async () => {} }
  const pauseMs = Math.min(60_000, Math.max(1000, Math.floor(o.retentionMs / 10)))
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let stopped = false
  const step = async () => {
    let deleted = 0
    try {
      deleted = await pruneStep(o.db, new Date(o.clock.now().getTime() - o.retentionMs).toISOString())
    } catch (err) {
      o.logger.warn('retention step failed; trying again later', { error: String(err) })
    }
    if (stopped) return
    if (deleted > 0) setImmediate(go)
    else timer = setTimeout(go, pauseMs).unref()
  }
  const go = () => {
    if (!stopped) running = step()
  }
  timer = setTimeout(go, Math.min(pauseMs, 1000)).unref()
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
