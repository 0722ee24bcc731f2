import type { Db } from '../../db/connect.ts'
import type { Engine } from '../../engine/port.ts'
import { requeueDeliveries } from '../../delivery/requeue.ts'
import { toDelivery, toDeliveryWithAttempts } from './deliveries.ts'
import type { DeliveryWithPayload } from './repo.ts'
import type { Delivery, DeliveryDetail } from './schema.ts'

/**
 * The operator's view of deliveries, for `travelops deliveries …`: it spans tenants unless a
 * tenant is named. Routes never use this file; the API always starts from the tenant (repo.ts).
 * Records come out exactly as the API shows them (toDelivery / toDeliveryWithAttempts).
 */

export interface OperatorDeliveryFilter {
  tenantId?: string
  webhookId?: string
  status?: string
  limit: number
}

/** Newest first, at most `limit`. */
export async function listDeliveriesAnyTenant(db: Db, f: OperatorDeliveryFilter): Promise<Delivery[]> {
  let q = _withPayload(db)
  if (f.tenantId) q = q.where('deliveries.tenant_id', '=', f.tenantId)
  if (f.webhookId) q = q.where('deliveries.webhook_id', '=', f.webhookId)
  if (f.status) q = q.where('deliveries.status', '=', f.status)
  const rows = await q.orderBy('deliveries.id', 'desc').limit(f.limit).execute()
  return rows.map(toDelivery)
}

/** One record with its payload and every attempt, whichever tenant it belongs to. */
export async function getDeliveryAnyTenant(db: Db, id: string): Promise<DeliveryDetail | undefined> {
  const row = await _withPayload(db).where('deliveries.id', '=', id).executeTakeFirst()
  if (!row) return undefined
  const attempts = await db.selectFrom('delivery_attempts').selectAll()
    .where('tenant_id', '=', row.tenant_id).where('delivery_id', '=', id).orderBy('attempt').execute()
  return toDeliveryWithAttempts(row, attempts)
}

/** A subscription by id, deleted ones included (their delivery records stay). */
export function findWebhookAnyTenant(db: Db, id: string) {
  return db.selectFrom('webhooks').select(['id', 'tenant_id', 'active', 'deleted_at']).where('id', '=', id).executeTakeFirst()
}

export interface RetryReport {
  /** Ids that name no delivery; when there are any, nothing was queued. */
  unknown: string[]
  requeued: string[]
  /** Existing deliveries that were not queued, and why. */
  skipped: { id: string; reason: string }[]
}

/**
 * Queues an immediate new attempt of each delivery, all or nothing as to existence: if any id
 * is unknown nothing is queued. A delivery still waiting for its first attempt, or whose
 * subscription is inactive or deleted, is skipped with its reason (as the API's retry answers 409).
 */
export async function retryDeliveriesAnyTenant(opened: { db: Db; engine: Engine }, ids: readonly string[], now: Date): Promise<RetryReport> {
  const { db } = opened
  const wanted = [...new Set(ids)]
  const rows = await db.selectFrom('deliveries').innerJoin('webhooks', 'webhooks.id', 'deliveries.webhook_id')
    .select(['deliveries.id', 'deliveries.status', 'deliveries.webhook_id', 'webhooks.active', 'webhooks.deleted_at'])
    .where('deliveries.id', 'in', wanted.length ? wanted : ['']).execute()
  const byId = new Map(rows.map((r) => [r.id, r]))
  const unknown = wanted.filter((id) => !byId.has(id))
  if (unknown.length) return { unknown, requeued: [], skipped: [] }
  const skipped: RetryReport['skipped'] = []
  const eligible: string[] = []
  for (const id of wanted) {
    const r = byId.get(id)!
    if (r.status === 'pending') skipped.push({ id, reason: 'pending: its first attempt has not finished yet' })
    else if (r.deleted_at !== null) skipped.push({ id, reason: `its subscription ${r.webhook_id} is deleted` })
    else if (r.active !== 1) skipped.push({ id, reason: `its subscription ${r.webhook_id} is inactive` })
    else eligible.push(id)
  }
  const queued = new Set(eligible.length ? await requeueDeliveries(opened, { ids: eligible }, now) : [])
  for (const id of eligible) {
    if (!queued.has(id)) skipped.push({ id, reason: 'its subscription changed meanwhile (inactive or deleted)' })
  }
  return { unknown: [], requeued: eligible.filter((id) => queued.has(id)), skipped }
}

function _withPayload(db: Db) {
  return db.selectFrom('deliveries').innerJoin('events', 'events.id', 'deliveries.event_id')
    .selectAll('deliveries').select('events.payload')
    .$castTo<DeliveryWithPayload>()
}
