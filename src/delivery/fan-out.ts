import { compiled } from '../db/compiled.ts'
import { newId } from '../lib/ids.ts'
import type { Job, Lease } from './port.ts'
import { storedHeaders } from './stored-headers.ts'

// The fan-out's parts both engines' outbox writers share (engine/sqlite/outbox.ts,
// engine/postgres/outbox.ts, reached through Engine.writeEvent()): what they are given and
// return, which subscriptions want an event, and a delivery written under a lease as the
// worker's job.

/** What the outbox writer wrote: the subscriptions given a delivery, and, under a lease, those deliveries as the worker's jobs. */
export interface Written {
  webhookIds: string[]
  jobs?: Job[]
}

/** An event for the outbox: its id, tenant, name, time and the exact payload that is signed. */
export interface OutboxEvent { id: string; tenantId: string; name: string; at: string; payload: string }

/** A subscription given a delivery, with what sending needs. */
export interface OutboxTarget { id: string; url: string; secret: string; headers: string; retry_count: number }

/** A delivery just written under a lease, as the worker's job (what a claim would have returned). */
export function leasedJob(event: OutboxEvent, id: string, w: OutboxTarget, lease: Lease): Job {
  return {
    id, tenant_id: event.tenantId, webhook_id: w.id, event_id: event.id, event: event.name, attempts: 0, retries: 0, manual: 0,
    next_retry_at: null, status: 'pending', owner: lease.owner, url: w.url, secret: w.secret, headers: storedHeaders(w.headers),
    retryCount: Number(w.retry_count), payload: event.payload, eventAt: event.at,
  }
}

/** Delivery ids for `n` deliveries. */
export const deliveryIds = (n: number) => Array.from({ length: n }, () => newId('del'))

export const insertEvent = compiled((db, id: string, tenant_id: string, name: string, payload: string, created_at: string) =>
  db.insertInto('events').values({ id, tenant_id, name, payload, created_at }))

/** One pending delivery of an event to one subscription, due at once; leased to a worker when `locked_by` is given (`writeEvent` under a lease). */
export const insertDelivery = compiled((db, id: string, tenant_id: string, webhook_id: string, event_id: string, event: string, at: string, locked_until: string | null, locked_by: string | null) =>
  db.insertInto('deliveries').values({
    id, tenant_id, webhook_id, event_id, event, status: 'pending', attempts: 0, retries: 0, manual: 0, created_at: at, due_at: at, locked_until, locked_by,
  }))
