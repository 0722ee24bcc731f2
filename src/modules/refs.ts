import type { Db } from '../db/connect.ts'
import { tenantTable } from '../db/tenant-table.ts'
import type { Tx } from '../db/tx.ts'
import { InvalidError, type ErrorDetail } from '../lib/errors.ts'

/** Which table each reference field points into. */
const REF_TABLES = {
  customerId: tenantTable('customers'),
  productId: tenantTable('products'),
  orderId: tenantTable('orders'),
  invoiceId: tenantTable('invoices'),
} as const

const NOUNS: Record<RefField, string> = { customerId: 'customer', productId: 'product', orderId: 'order', invoiceId: 'invoice' }

export type RefField = keyof typeof REF_TABLES

/**
 * Checks that every given reference names a record of the caller's tenant; 422 listing each
 * that does not (another tenant's id is reported exactly like an unknown one). `refs` maps a
 * body path (e.g. `items[2].productId`) to [field kind, id].
 */
export async function assertRefs(db: Db | Tx, tenantId: string, refs: Record<string, [RefField, string | null | undefined]>): Promise<void> {
  const details: ErrorDetail[] = []
  for (const [path, [field, id]] of Object.entries(refs)) {
    if (id === null || id === undefined) continue
    const found = await REF_TABLES[field].find(db, tenantId, id)
    if (!found) details.push({ path, message: `no ${NOUNS[field]} ${id}` })
  }
  if (details.length) throw new InvalidError(details)
}
