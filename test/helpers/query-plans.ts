import { CompiledQuery, type KyselyPlugin, type RootOperationNode } from 'kysely'
import type { Db } from '../../src/db/connect.ts'

// What the query-plan tests share (test/db/*-plans.test.ts): the statements a read sends, and
// PostgreSQL's EXPLAIN (ANALYZE, FORMAT JSON) node as they walk it.

/** Runs `run` on `db`, recording every statement it sends, compiled as sent. */
export async function recording<T>(db: Db, run: (db: Db) => Promise<T>): Promise<{ rows: T; statements: CompiledQuery[] }> {
  const statements: CompiledQuery[] = []
  const plugin: KyselyPlugin = {
    transformQuery: ({ node, queryId }): RootOperationNode => {
      statements.push(db.getExecutor().compileQuery(node, queryId))
      return node
    },
    transformResult: async ({ result }) => result,
  }
  const rows = await run(db.withPlugin(plugin))
  return { rows, statements }
}

/** A node of PostgreSQL's JSON plan, with ANALYZE's counts. */
export interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Actual Rows': number
  'Actual Loops': number
  'Rows Removed by Filter'?: number
  'Rows Removed by Index Recheck'?: number
  Plans?: PlanNode[]
}
