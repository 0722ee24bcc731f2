import { syncDbOfTx, type SyncDb } from '../../db/exclusive.ts'
import type { Tx } from '../../db/tx.ts'
import { deliveryIds, leasedJob, type OutboxEvent, type OutboxTarget, type Written } from '../../delivery/fan-out.ts'
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
  return writeEventSync(syncDbOfTx(tx), event, lease)
}

/**
 * The writer itself, synchronous on the connection a transaction holds: a request's (withTx(),
 * above) or the delivery store's cycle (exclusive()), which writes `webhook.disabled` through it
 * in the transaction that disables a subscription (delivery-store.ts). One writer, so every
 * event fans out alike; its statements are the ones compiled() ran here before, as SQL text.
 */
export function writeEventSync(q: SyncDb, event: OutboxEvent, lease?: Lease | null): Written {
  const targets = _activeWebhooks(q, event.tenantId).filter((w) => wantsEvent(w.events, event.name))
  q.run(_INSERT_EVENT, event.id, event.tenantId, event.name, event.payload, event.at)
  const ids = deliveryIds(targets.length)
  const jobs: Job[] | undefined = lease ? [] : undefined
  for (const [i, w] of targets.entries()) {
    const l = lease && !lease.skip?.includes(w.id) ? lease : null
    q.run(_INSERT_DELIVERY, ids[i]!, event.tenantId, w.id, event.id, event.name, event.at, event.at, l?.until ?? null, l?.owner ?? null)
    if (l) jobs!.push(leasedJob(event, ids[i]!, w, l))
  }
  return { webhookIds: targets.map((w) => w.id), jobs }
}

// The tenant's active subscriptions (at most --max-webhooks), matched here rather than in SQL:
// a few dozen short JSON arrays parse in microseconds. Through the index webhooks_tenant.
const _activeWebhooks = (q: SyncDb, tenantId: string) => q.all<OutboxTarget & { events: string }>(
  'SELECT id, events, url, secret, headers, retry_count FROM webhooks WHERE tenant_id = ? AND active = 1 AND deleted_at IS NULL', tenantId)

const _INSERT_EVENT = 'INSERT INTO events (id, tenant_id, name, payload, created_at) VALUES (?, ?, ?, ?, ?)'

/** One pending delivery, due at once; leased to a worker when `locked_by` is given. */
const _INSERT_DELIVERY = `INSERT INTO deliveries (id, tenant_id, webhook_id, event_id, event, status, attempts, retries, manual, created_at, due_at, locked_until, locked_by)
  VALUES (?, ?, ?, ?, ?, 'pending', 0, 0, 0, ?, ?, ?, ?)`
