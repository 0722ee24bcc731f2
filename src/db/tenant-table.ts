import type { Kysely, Selectable, Updateable, Insertable } from 'kysely'
import type { Db } from './connect.ts'
import type { Database } from './schema.ts'
import type { Tx } from './tx.ts'
import { readPageRows, type PageRows, type WindowFloor } from './page-rows.ts'

/** The tables whose rows belong to one tenant and have an id. */
export type TenantTableName = {
  [K in keyof Database]: Database[K] extends { id: string; tenant_id: string } ? K : never
}[keyof Database]

type Row<T extends TenantTableName> = Selectable<Database[T]>
type Columns<T extends TenantTableName> = { [K in keyof Row<T>]?: Row<T>[K] | undefined }

export interface ListOptions<T extends TenantTableName> {
  /** Column = value (`null` means IS NULL); undefined values are ignored, so optional filters pass straight through. */
  eq?: Columns<T>
  gt?: Columns<T>
  lt?: Columns<T>
  /** Keyset cursor: only ids before this one (ids are time-ordered UUIDv7). */
  after?: string
  limit: number
}

export interface TenantTable<T extends TenantTableName> {
  find(db: Db | Tx, tenantId: string, id: string, scope?: Columns<T>): Promise<Row<T> | undefined>
  insert(db: Db | Tx, row: Insertable<Database[T]>): Promise<void>
  update(db: Db | Tx, tenantId: string, id: string, set: Updateable<Database[T]>, scope?: Columns<T>): Promise<void>
  remove(db: Db | Tx, tenantId: string, id: string, scope?: Columns<T>): Promise<boolean>
  /** Newest first, keyset-paged on the id; fetches limit + 1 so the caller knows whether more follow. */
  list(db: Db | Tx, tenantId: string, opts: ListOptions<T>): Promise<PageRows<Row<T>>>
  /** The first row matching `eq` (e.g. a unique code or slug), if any. */
  findBy(db: Db | Tx, tenantId: string, eq: Columns<T>): Promise<Row<T> | undefined>
}

/** What a table's indexes serve to a list (newest first, keyset-paged on the id). */
export interface ListIndexes<T extends TenantTableName> {
  /**
   * Each set of columns that an index `(tenant_id, …those columns, id)` serves: a list filtered by
   * equality on exactly one of these sets (or on nothing) reads only its page. Any other filter is
   * read in windows under a scan budget (db/page-rows.ts).
   */
  served?: (keyof Row<T> & string)[][]
  /** Columns every list of the table filters on by equality, first in an index `(tenant_id, …, id)`: the records a window counts (content: its entity). */
  scope?: (keyof Row<T> & string)[]
}

/**
 * The id `k` records below `after` among the tenant's rows of `table` that match `scope` (one
 * index range, id column only), or undefined when fewer than `k` are left: the floor of a
 * window of a filtered list (db/page-rows.ts). A list read oldest first (`order` 'asc': the
 * events API) gets its mirror, the id `k` records above `after`: the window's ceiling.
 */
export function windowFloor(db: Db | Tx, table: TenantTableName, tenantId: string, scope: Record<string, unknown> = {}, order: 'asc' | 'desc' = 'desc'): WindowFloor {
  return async (after, k) => {
    let q = (db as unknown as Kysely<any>).selectFrom(table).select('id').where('tenant_id', '=', tenantId)
    for (const [col, value] of Object.entries(scope)) q = q.where(col, '=', value)
    if (after) q = q.where('id', order === 'asc' ? '>' : '<', after)
    const row = await q.orderBy('id', order).limit(1).offset(k - 1).executeTakeFirst() as { id: string } | undefined
    return row?.id
  }
}

/**
 * The one place that reads and writes tenant-owned rows: every statement it builds starts
 * with `tenant_id = ?`, so a module cannot forget it. (kysely cannot type a table chosen by a
 * type parameter, so the builder is untyped inside; the signatures above are what callers see.)
 */
export function tenantTable<T extends TenantTableName>(table: T, indexes: ListIndexes<T> = {}): TenantTable<T> {
  const name: string = table
  const plan = listIndexes(table, indexes)
  const k = (db: Db | Tx) => db as unknown as Kysely<any>
  const where = <Q extends { where: (...a: any[]) => any }>(q: Q, op: string, cols: Columns<T> | undefined): Q => {
    for (const [col, value] of Object.entries(cols ?? {})) {
      if (value === null) q = q.where(col, op === '=' ? 'is' : op, null)
      else if (value !== undefined) q = q.where(col, op, value)
    }
    return q
  }
  return {
    find: (db, tenantId, id, scope) =>
      where(k(db).selectFrom(name).selectAll().where('tenant_id', '=', tenantId).where('id', '=', id), '=', scope).executeTakeFirst() as Promise<Row<T> | undefined>,
    async insert(tx, row) {
      await k(tx).insertInto(name).values(row as Record<string, unknown>).execute()
    },
    async update(tx, tenantId, id, set, scope) {
      await where(k(tx).updateTable(name).set(set as Record<string, unknown>).where('tenant_id', '=', tenantId).where('id', '=', id), '=', scope).execute()
    },
    async remove(tx, tenantId, id, scope) {
      const r = await where(k(tx).deleteFrom(name).where('tenant_id', '=', tenantId).where('id', '=', id), '=', scope).executeTakeFirst()
      return Number(r.numDeletedRows) > 0
    },
    list(db, tenantId, o) {
      const eq = _given(o.eq)
      const inOrder = _given(o.gt).length === 0 && _given(o.lt).length === 0 && plan.served(eq)
      const windows = inOrder ? undefined : windowFloor(db, table, tenantId, _pick(o.eq, plan.windowBy(eq)))
      return readPageRows<Row<T> & { id: string }>(o.limit, o.after, (after, n, floor) => {
        let q = k(db).selectFrom(name).selectAll().where('tenant_id', '=', tenantId)
        q = where(where(where(q, '=', o.eq), '>', o.gt), '<', o.lt)
        if (after) q = q.where('id', '<', after)
        if (floor) q = q.where('id', '>=', floor)
        return q.orderBy('id', 'desc').limit(n).execute() as Promise<(Row<T> & { id: string })[]>
      }, windows)
    },
    findBy: (db, tenantId, eq) =>
      where(k(db).selectFrom(name).selectAll().where('tenant_id', '=', tenantId), '=', eq).executeTakeFirst() as Promise<Row<T> | undefined>,
  }
}

const _given = (cols: object | undefined): string[] => Object.entries(cols ?? {}).filter(([, v]) => v !== undefined).map(([c]) => c)

/** Every table's declared list indexes (test/db/list-indexes.test.ts checks each against both engines' schemas). */
export const LIST_INDEXES = new Map<string, { served: string[][]; scope: string[] }>()

/** What a table's list indexes say about one list's equality filters. */
export interface ListPlan {
  /** Whether one index range in id order serves exactly these filters (equality on one served set, or on the scope alone). */
  served(eq: string[]): boolean
  /**
   * The columns whose index the windows of a list with these filters count on: the first served
   * set (in the order declared: the most selective first) that the filters include, else the scope.
   * A filter on a customer and a status counts the customer's orders, not the tenant's.
   */
  windowBy(eq: string[]): string[]
}

/** Declares what `table`'s indexes serve to its lists (see ListIndexes); the answers for a list's filters. */
export function listIndexes(table: TenantTableName, indexes: { served?: string[][]; scope?: string[] }): ListPlan {
  const scope = indexes.scope ?? []
  const served = indexes.served ?? []
  // refs.ts opens some tables again without the list's declaration: the declaration wins.
  if (!LIST_INDEXES.has(table) || served.length > 0 || scope.length > 0) LIST_INDEXES.set(table, { served, scope })
  const keys = new Set([scope, ...served].map((set) => [...set].sort().join()))
  return {
    served: (eq) => keys.has([...eq].sort().join()),
    windowBy: (eq) => served.find((set) => set.every((c) => eq.includes(c))) ?? scope,
  }
}

function _pick(cols: object | undefined, names: string[] | undefined): Record<string, unknown> {
  return Object.fromEntries((names ?? []).map((c) => [c, (cols as Record<string, unknown> | undefined)?.[c]]))
}
