import type { Kysely, Selectable, Updateable, Insertable } from 'kysely'
import type { Db } from './connect.ts'
import type { Database } from './schema.ts'
import type { Tx } from './tx.ts'
import { readPageRows } from './page-rows.ts'

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
  list(db: Db | Tx, tenantId: string, opts: ListOptions<T>): Promise<Row<T>[]>
  /** The first row matching `eq` (e.g. a unique code or slug), if any. */
  findBy(db: Db | Tx, tenantId: string, eq: Columns<T>): Promise<Row<T> | undefined>
}

/**
 * The one place that reads and writes tenant-owned rows: every statement it builds starts
 * with `tenant_id = ?`, so a module cannot forget it. (kysely cannot type a table chosen by a
 * type parameter, so the builder is untyped inside; the signatures above are what callers see.)
 */
export function tenantTable<T extends TenantTableName>(table: T): TenantTable<T> {
  const name: string = table
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
      return readPageRows<Row<T> & { id: string }>(o.limit, o.after, (after, n) => {
        let q = k(db).selectFrom(name).selectAll().where('tenant_id', '=', tenantId)
        q = where(where(where(q, '=', o.eq), '>', o.gt), '<', o.lt)
        if (after) q = q.where('id', '<', after)
        return q.orderBy('id', 'desc').limit(n).execute() as Promise<(Row<T> & { id: string })[]>
      })
    },
    findBy: (db, tenantId, eq) =>
      where(k(db).selectFrom(name).selectAll().where('tenant_id', '=', tenantId), '=', eq).executeTakeFirst() as Promise<Row<T> | undefined>,
  }
}
