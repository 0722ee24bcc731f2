import type { Db } from '../../db/connect.ts'
import type { ItineraryRow, ItineraryUpdate } from '../../db/schema.ts'
import type { Tx } from '../../db/tx.ts'

/** Every query of this file starts from the tenant. */

export function findItinerary(db: Db | Tx, tenantId: string, id: string): Promise<ItineraryRow | undefined> {
  return db.selectFrom('itineraries').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
}

export async function insertItinerary(tx: Tx, row: ItineraryRow): Promise<void> {
  await tx.insertInto('itineraries').values(row).execute()
}

export async function updateItinerary(tx: Tx, tenantId: string, id: string, set: ItineraryUpdate): Promise<void> {
  await tx.updateTable('itineraries').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteItinerary(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const r = await tx.deleteFrom('itineraries').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}

export interface ItineraryFilter {
  orderId?: string
  after?: string
  limit: number
}

/** Newest first, keyset-paged on the id; fetches limit + 1 to know whether more follow. */
export function listItineraries(db: Db, tenantId: string, f: ItineraryFilter): Promise<ItineraryRow[]> {
  let q = db.selectFrom('itineraries').selectAll().where('tenant_id', '=', tenantId)
  if (f.orderId) q = q.where('order_id', '=', f.orderId)
  if (f.after) q = q.where('id', '<', f.after)
  return q.orderBy('id', 'desc').limit(f.limit + 1).execute()
}
