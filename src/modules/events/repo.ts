import type { Db } from '../../db/connect.ts'
import { readPageRows, type PageRows } from '../../db/page-rows.ts'
import { listIndexes, windowFloor } from '../../db/tenant-table.ts'
import { EVENT_NAMES } from '../../events/catalog.ts'

/** What the API reads of an event: its id and the envelope as stored, the exact body of every delivery of it. */
export interface StoredEvent {
  id: string
  payload: string
}

/** One event of the tenant (a primary-key lookup), or undefined: another tenant's is not found. */
export function findEvent(db: Db, tenantId: string, id: string): Promise<StoredEvent | undefined> {
  return db.selectFrom('events').select(['id', 'payload']).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
}

export interface EventFilter {
  /** Event names (at least one); undefined: every event. */
  names?: readonly string[]
  createdAfter?: string
  createdBefore?: string
  order: 'asc' | 'desc'
  after?: string
  limit: number
}

// events_tenant (tenant_id, id) serves the list of every event, events_tenant_name (tenant_id, name, id) one name
// (declared for test/db/list-indexes.test.ts, which holds both engines' schemas to it).
listIndexes('events', { served: [['name']] })

/**
 * A page of the tenant's events in id order (newest first, or oldest with `order` 'asc'), keyset-paged
 * on the id, `limit + 1` rows. Every event, or one name, is one index range; several names are a range
 * each, at most a page read from each and merged, so a rare name among many others costs no more than
 * a common one. Those ranges are read as ids alone (_ids(): an index-only read where the engine can),
 * then the page's rows by their primary key (_rows()). A time range is not served in id order
 * (decision 0003: `created_at` is the clock's, the id the process's): it is read in windows under the
 * scan budget (db/page-rows.ts), counted over the one name's index range or the tenant's.
 */
export function listEvents(db: Db, tenantId: string, f: EventFilter): Promise<PageRows<StoredEvent>> {
  const names = f.names && f.names.length < EVENT_NAMES.length ? f.names : undefined
  const dir = _direction(f.order)
  if (!f.createdAfter && !f.createdBefore) {
    const ranges = names ?? [undefined]
    return readPageRows(f.limit, f.after, (after, n) => _part(db, tenantId, ranges, dir, after, n))
  }
  const scope = names?.length === 1 ? { name: names[0] } : {}
  return readPageRows(f.limit, f.after, (after, n, bound) => _read(db, tenantId, { ...f, names }, dir, after, n, bound),
    windowFloor(db, 'events', tenantId, scope, f.order))
}

interface _Direction {
  order: 'asc' | 'desc'
  /** Past the cursor. */
  past: '<' | '>'
  /** Within the window's bound (its floor newest first, its ceiling oldest first), which the window includes. */
  within: '>=' | '<='
}

const _direction = (order: 'asc' | 'desc'): _Direction => (order === 'asc' ? { order, past: '>', within: '<=' } : { order, past: '<', within: '>=' })

/** Up to `n` events past `after` matching every filter, within the window's `bound`, in the list's order. */
function _read(db: Db, tenantId: string, f: EventFilter, dir: _Direction, after: string | undefined, n: number, bound?: string): Promise<StoredEvent[]> {
  let q = db.selectFrom('events').select(['id', 'payload']).where('tenant_id', '=', tenantId)
  if (f.names?.length === 1) q = q.where('name', '=', f.names[0]!)
  else if (f.names) q = q.where('name', 'in', f.names)
  if (f.createdAfter) q = q.where('created_at', '>', f.createdAfter)
  if (f.createdBefore) q = q.where('created_at', '<', f.createdBefore)
  if (after) q = q.where('id', dir.past, after)
  if (bound) q = q.where('id', dir.within, bound)
  return q.orderBy('id', dir.order).limit(n).execute()
}

/** Up to `n` events past `after` of these names' ranges, in the list's order: their ids, then their rows. */
async function _part(db: Db, tenantId: string, ranges: readonly (string | undefined)[], dir: _Direction, after: string | undefined, n: number): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for (let from = after; ;) {
    const want = n - out.length
    const ids = await _ids(db, tenantId, ranges, dir, from, want)
    out.push(...await _rows(db, tenantId, ids, dir))
    // An event deleted between the two reads (retention) leaves the part short: read on past it.
    if (ids.length < want || out.length === n) return out
    from = ids[ids.length - 1]
  }
}

/**
 * The first `n` ids past `after`, in the list's order, of the events of these names (undefined:
 * every event): the first `n` of each name's range of events_tenant_name — or of events_tenant —
 * in one statement, then the first `n` of them all.
 */
async function _ids(db: Db, tenantId: string, names: readonly (string | undefined)[], dir: _Direction, after: string | undefined, n: number): Promise<string[]> {
  const range = (name: string | undefined) => {
    let q = db.selectFrom('events').select('id').where('tenant_id', '=', tenantId)
    if (name !== undefined) q = q.where('name', '=', name)
    if (after) q = q.where('id', dir.past, after)
    return q.orderBy('id', dir.order).limit(n)
  }
  if (names.length === 1) return (await range(names[0]).execute()).map((r) => r.id)
  const each = (name: string | undefined) => db.selectFrom(range(name).as('r')).select('r.id')
  let all = each(names[0])
  for (const name of names.slice(1)) all = all.unionAll(each(name))
  const ids = (await all.execute()).map((r) => r.id).sort()
  return (dir.order === 'desc' ? ids.reverse() : ids).slice(0, n)
}

/** The events of `ids` (the tenant's), in the list's order. */
async function _rows(db: Db, tenantId: string, ids: string[], dir: _Direction): Promise<StoredEvent[]> {
  if (ids.length === 0) return []
  const rows = await db.selectFrom('events').select(['id', 'payload']).where('tenant_id', '=', tenantId).where('id', 'in', ids).execute()
  rows.sort((a, b) => (a.id < b.id ? -1 : 1))
  return dir.order === 'asc' ? rows : rows.reverse()
}
