import { sql } from 'kysely'
import type { Tx } from '../db/tx.ts'
import { newId } from '../lib/ids.ts'

/**
 * One pending delivery per active subscription of the event's tenant that asked for this
 * event (or for `*`), written in the transaction that wrote the event. Returns how many.
 */
export async function fanOut(tx: Tx, event: { id: string; tenantId: string; name: string; at: string }): Promise<number> {
  const targets = await tx.selectFrom('webhooks').select('id')
    .where('tenant_id', '=', event.tenantId)
    .where('active', '=', 1)
    .where('deleted_at', 'is', null)
    .where(sql<boolean>`exists (select 1 from json_each(webhooks.events) where value in (${event.name}, '*'))`)
    .execute()
  if (targets.length === 0) return 0
  await tx.insertInto('deliveries').values(targets.map((w) => ({
    id: newId('del'),
    tenant_id: event.tenantId,
    webhook_id: w.id,
    event_id: event.id,
    event: event.name,
    status: 'pending',
    attempts: 0,
    retries: 0,
    manual: 0,
    created_at: event.at,
    due_at: event.at,
  }))).execute()
  return targets.length
}
