import { compiled } from '../../db/compiled.ts'
import type { Tx } from '../../db/tx.ts'
import { deliveryIds, insertDelivery, insertEvent, leasedJob, type OutboxEvent, type Written } from '../../delivery/fan-out.ts'
import { wantsEvent } from '../../delivery/rules/fan-out.ts'
import type { Job, Lease } from '../../delivery/port.ts'

/**
 * SQLite's outbox writer (Engine.writeEvent()): an event and one pending delivery per active
 * subscription of its tenant that asked for it (or for `*`), written in the caller's
 * transaction, a statement per row (each a cached statement run in-process), the subscriptions
 * matched here. With a `lease` (the worker of the process committing, when it has room), the
 * deliveries are written already leased to that worker and come back as its jobs, with what
 * sending needs: once the transaction commits the worker sends them at once, with no claim in
 * between (worker.ts) — all but those of the subscriptions the lease skips (those that cannot
 * start an attempt now), written unleased, with no job. Without one, the worker's fast path
 * claims from the subscriptions returned.
 */
export async function writeEventSqlite(tx: Tx, event: OutboxEvent, lease?: Lease | null): Promise<Written> {
  const targets = (await _activeWebhooks(tx, event.tenantId)).filter((w) => wantsEvent(w.events, event.name))
  await insertEvent(tx, event.id, event.tenantId, event.name, event.payload, event.at)
  const ids = deliveryIds(targets.length)
  const jobs: Job[] | undefined = lease ? [] : undefined
  for (const [i, w] of targets.entries()) {
    const l = lease && !lease.skip?.includes(w.id) ? lease : null
    await insertDelivery(tx, ids[i]!, event.tenantId, w.id, event.id, event.name, event.at, l?.until ?? null, l?.owner ?? null)
    if (l) jobs!.push(leasedJob(event, ids[i]!, w, l))
  }
  return { webhookIds: targets.map((w) => w.id), jobs }
}

// The tenant's active subscriptions (at most --max-webhooks), matched here rather than in SQL:
// a few dozen short JSON arrays parse in microseconds.
const _activeWebhooks = compiled((db, tenantId: string) => db.selectFrom('webhooks').select(['id', 'events', 'url', 'secret', 'headers', 'retry_count'])
  .where('tenant_id', '=', tenantId)
  .where('active', '=', 1)
  .where('deleted_at', 'is', null))
