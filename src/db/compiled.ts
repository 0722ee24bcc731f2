import { createQueryId, type Compilable, type CompiledQuery } from 'kysely'
import { internalsOf, internalsOfTx, type Db } from './connect.ts'
import type { Tx } from './tx.ts'

/**
 * A query on a hot path, built and compiled by kysely once: each call only binds its arguments
 * into the compiled SQL and runs the cached statement synchronously, skipping kysely's
 * executor (several promise turns per query): outside a transaction in the serialising
 * driver's turn, inside one opened by withTx() on the connection that transaction holds.
 * (In a transaction kysely opened some other way it goes through kysely's executor.)
 * Building and compiling a kysely query costs ≈20 µs, more than running the prepared statement.
 *
 *   const findOrder = compiled((db, tenantId: string, id: string) =>
 *     db.selectFrom('orders').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id))
 *   const rows = await findOrder(db, tenantId, id)
 *
 * `build` must use each argument only as a value (never to decide the query's shape): it is
 * called once, with placeholders instead of the arguments.
 */
export function compiled<A extends unknown[], R>(build: (db: Db, ...args: A) => Compilable<R>): (db: Db | Tx, ...args: A) => Promise<R[]> {
  // Compiled once per dialect: a process may hold both engines (`db copy`, the engine port's
  // suite), and one's SQL is not the other's. The dialect is read from the adapter's class, one
  // comparison on each call.
  let dialect: unknown
  let template: _Template<R> | undefined
  const others = new Map<unknown, _Template<R>>()
  return async (db, ...args) => {
    const adapter = db.getExecutor().adapter.constructor
    if (adapter !== dialect || !template) {
      if (template) others.set(dialect, template)
      template = others.get(adapter) ?? _compile(db as Db, build, args.length)
      dialect = adapter
    }
    const parameters = template.slots.map((s) => (typeof s === 'number' ? args[s] : s.value))
    if (db.isTransaction) {
      const x = internalsOfTx(db as Tx)
      if (x) return _run<R>(x.prepare(template.query.sql), parameters)
    } else {
      const x = internalsOf(db as Db)
      if (x) {
        await x.lock()
        try {
          return _run<R>(x.prepare(template.query.sql), parameters)
        } finally {
          x.unlock()
        }
      }
    }
    const result = await db.executeQuery<R>({ ...template.query, parameters, queryId: createQueryId() })
    return result.rows
  }
}

type _Slot = number | { value: unknown }
interface _Template<R> { query: CompiledQuery<R>; slots: _Slot[] }

function _run<R>(stmt: ReturnType<NonNullable<ReturnType<typeof internalsOf>>['prepare']>, parameters: unknown[]): R[] {
  if (stmt.reader) return stmt.all(...parameters) as R[]
  stmt.run(...parameters)
  return []
}

const _MARK = '\u0000travelops-arg:'

function _compile<A extends unknown[], R>(db: Db, build: (db: Db, ...args: A) => Compilable<R>, arity: number) {
  const marks = Array.from({ length: arity }, (_, i) => `${_MARK}${i}`) as A
  const query = build(db, ...marks).compile()
  const slots = query.parameters.map((p): _Slot => (typeof p === 'string' && p.startsWith(_MARK) ? Number(p.slice(_MARK.length)) : { value: p }))
  for (let i = 0; i < arity; i++) if (!slots.includes(i)) throw new Error(`compiled(): argument ${i} does not appear as a value in ${query.sql}`)
  return { query, slots }
}
