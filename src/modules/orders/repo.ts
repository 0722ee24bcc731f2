import { compiled } from '../../db/compiled.ts'
import type { Db } from '../../db/connect.ts'
import { readPageRows, type PageRows } from '../../db/page-rows.ts'
import { listIndexes, windowFloor } from '../../db/tenant-table.ts'
import type { NewOrder, OrderRow, OrderUpdate } from '../../db/schema.ts'
import type { Tx } from '../../db/tx.ts'

/** Every query of this file starts from the tenant. */

const _find = compiled((db, tenantId: string, id: string) =>
  db.selectFrom('orders').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id))

export async function findOrder(db: Db | Tx, tenantId: string, id: string): Promise<OrderRow | undefined> {
  return (await _find(db, tenantId, id))[0]
}

export async function insertOrder(tx: Tx, row: NewOrder): Promise<void> {
  await _insert(tx, row.id, row.tenant_id, row.order_number, row.status, row.customer_id ?? null, row.customer, row.items, row.total,
    row.currency, row.travel_date ?? null, row.notes ?? null, row.metadata ?? null, row.created_at, row.updated_at)
}

const _insert = compiled((db, id: string, tenant_id: string, order_number: string, status: string, customer_id: string | null, customer: string,
  items: string, total: number, currency: string, travel_date: string | null, notes: string | null, metadata: string | null,
  created_at: string, updated_at: string) =>
  db.insertInto('orders').values({
    id, tenant_id, order_number, status, customer_id, customer, items, total, currency, travel_date, notes, metadata, created_at, updated_at,
  }))

export async function updateOrder(tx: Tx, tenantId: string, id: string, set: OrderUpdate): Promise<void> {
  await tx.updateTable('orders').set(set).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteOrder(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const r = await tx.deleteFrom('orders').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}

export interface OrderFilter {
  status?: string
  customerId?: string
  createdAfter?: string
  createdBefore?: string
  after?: string
  limit: number
}

/**
 * Newest first, keyset-paged on the id; fetches limit + 1 to know whether more follow. A status
 * or a customer alone is one index range (`orders_tenant_status`, `orders_tenant_customer`); a
 * time range or two filters at once are read in windows under the scan budget (db/page-rows.ts).
 */
export function listOrders(db: Db, tenantId: string, f: OrderFilter): Promise<PageRows<OrderRow>> {
  const eq: string[] = _FILTERS.filter((k) => f[k]).map((k) => _COLUMN[k])
  if (_plan.served(eq)) return _listPart(db, tenantId, f, f.after, f.limit + 1)
  const scope = Object.fromEntries(_plan.windowBy(eq).map((c) => [c, c === 'status' ? f.status : f.customerId]))
  return readPageRows(f.limit, f.after, (after, n, floor) => _listPart(db, tenantId, f, after, n, floor), windowFloor(db, 'orders', tenantId, scope))
}

const _FILTERS = ['status', 'customerId', 'createdAfter', 'createdBefore'] as const
/** The column each filter compares (a range is never served in id order: no set below names it). */
const _COLUMN = { status: 'status', customerId: 'customer_id', createdAfter: 'created_at>', createdBefore: 'created_at<' } as const
const _plan = listIndexes('orders', { served: [['customer_id'], ['status']] })
const _BOUNDS = ['after', 'floor'] as const
type _Filters = Partial<Record<(typeof _FILTERS)[number] | (typeof _BOUNDS)[number], string>>
const _lists = new Map<string, (db: Db, tenantId: string, limit: number, ...values: string[]) => Promise<OrderRow[]>>()

function _listPart(db: Db, tenantId: string, f: OrderFilter, after: string | undefined, n: number, floor?: string): Promise<OrderRow[]> {
  const values: _Filters = { status: f.status, customerId: f.customerId, createdAfter: f.createdAfter, createdBefore: f.createdBefore, after, floor }
  const present = [..._FILTERS, ..._BOUNDS].filter((k) => values[k])
  const shape = present.join()
  let query = _lists.get(shape)
  if (!query) {
    // One compiled query per combination of filters, each given filter one value of it.
    query = compiled((db, tenantId: string, limit: number, ...values: string[]) =>
      _list(db, tenantId, Object.fromEntries(present.map((k, i) => [k, values[i]])), limit))
    _lists.set(shape, query)
  }
  return query(db, tenantId, n, ...present.map((k) => values[k]!))
}

function _list(db: Db, tenantId: string, f: _Filters, limit: number) {
  let q = db.selectFrom('orders').selectAll().where('tenant_id', '=', tenantId)
  if (f.status) q = q.where('status', '=', f.status)
  if (f.customerId) q = q.where('customer_id', '=', f.customerId)
  if (f.createdAfter) q = q.where('created_at', '>', f.createdAfter)
  if (f.createdBefore) q = q.where('created_at', '<', f.createdBefore)
  if (f.after) q = q.where('id', '<', f.after)
  if (f.floor) q = q.where('id', '>=', f.floor)
  return q.orderBy('id', 'desc').limit(limit)
}
