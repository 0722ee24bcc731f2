import assert from 'node:assert/strict'
import { LIST_INDEXES } from '../../src/db/tenant-table.ts'

export interface IndexInfo { table: string; columns: string[]; unique: boolean }

const same = (a: string[], b: string[]) => a.length === b.length && a.every((c) => b.includes(c))

/**
 * Every declaration of db/tenant-table.ts LIST_INDEXES holds for the schema's indexes: each
 * served set (and the scope alone, which the windows count on) has an index `(tenant_id, …the
 * set in any order, id)`, or a unique index on `tenant_id` and columns of the set (one row at most).
 */
export function listIndexesHold(indexes: IndexInfo[]): void {
  for (const [table, { served, scope }] of LIST_INDEXES) {
    for (const set of [scope, ...served]) {
      const found = indexes.some((ix) => ix.table === table && ix.columns[0] === 'tenant_id' && (
        (same(ix.columns.slice(1, -1), set) && ix.columns.at(-1) === 'id') ||
        (ix.unique && ix.columns.length > 1 && ix.columns.slice(1).every((c) => set.includes(c)))))
      assert.ok(found, `${table}: no index (tenant_id, ${[...set, 'id'].join(', ')})`)
    }
  }
}
