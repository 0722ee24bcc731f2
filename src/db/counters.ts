import { compiled } from './compiled.ts'
import type { Db } from './connect.ts'
import type { Tx } from './tx.ts'

/**
 * Next value of a per-tenant sequence (order numbers, invoice numbers), written through `db`:
 * the engine's nextCounter() says which. On SQLite the caller's transaction (one writer:
 * gapless). On PostgreSQL a statement of its own on a small pool apart, committed at once:
 * every concurrent creation of a tenant would otherwise update the same counter row and all but
 * one would fail serialization; numbers stay unique and increasing, and a creation that rolls
 * back afterwards leaves a gap.
 */
export async function nextCounter(db: Db | Tx, tenantId: string, name: string): Promise<number> {
  const [row] = await _next(db, tenantId, name)
  return row!.value
}

const _next = compiled((db, tenantId: string, name: string) => db.insertInto('counters').values({ tenant_id: tenantId, name, value: 1 })
  .onConflict((oc) => oc.columns(['tenant_id', 'name']).doUpdateSet((eb) => ({ value: eb('counters.value', '+', 1) })))
  .returning('value'))
