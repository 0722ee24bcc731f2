import type { Db } from '../../db/connect.ts'
import { tenantTable } from '../../db/tenant-table.ts'
import type { Tx } from '../../db/tx.ts'
import type { ItineraryRow, ItineraryUpdate } from '../../db/schema.ts'

/** Rows of the caller's tenant only: every statement starts from `tenant_id` (see db/tenant-table.ts). */
const table = tenantTable('itineraries', { served: [['order_id']] })

export const findItinerary = (db: Db | Tx, tenantId: string, id: string): Promise<ItineraryRow | undefined> => table.find(db, tenantId, id)
export const insertItinerary = (tx: Tx, row: ItineraryRow): Promise<void> => table.insert(tx, row)
export const updateItinerary = (tx: Tx, tenantId: string, id: string, set: ItineraryUpdate): Promise<void> => table.update(tx, tenantId, id, set)
export const deleteItinerary = (tx: Tx, tenantId: string, id: string): Promise<boolean> => table.remove(tx, tenantId, id)

export interface ItineraryFilter {
  orderId?: string
  after?: string
  limit: number
}

/** Newest first, keyset-paged on the id; limit + 1 rows tell whether more follow. */
export function listItineraries(db: Db, tenantId: string, f: ItineraryFilter): Promise<ItineraryRow[]> {
  return table.list(db, tenantId, { eq: { order_id: f.orderId }, after: f.after, limit: f.limit })
}
