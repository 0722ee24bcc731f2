import { compiled } from './compiled.ts'
import type { Tx } from './tx.ts'

/** Next value of a per-tenant sequence (order numbers, invoice numbers), inside the caller's transaction. */
export async function nextCounter(tx: Tx, tenantId: string, name: string): Promise<number> {
  const [row] = await _next(tx, tenantId, name)
  return row!.value
}

const _next = compiled((db, tenantId: string, name: string) => db.insertInto('counters').values({ tenant_id: tenantId, name, value: 1 })
  .onConflict((oc) => oc.columns(['tenant_id', 'name']).doUpdateSet((eb) => ({ value: eb('counters.value', '+', 1) })))
  .returning('value'))
