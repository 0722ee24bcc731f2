import type { TxScope } from '../db/tx.ts'
import type { TenantContext } from '../context.ts'
import { insertDelivery, insertEvent } from '../delivery/fan-out.ts'
import { Rendered } from '../lib/rendered.ts'
import { newId } from '../lib/ids.ts'
import type { EventEnvelope, EventName } from './catalog.ts'

/**
 * Writes one event to the outbox inside the caller's transaction, so a committed change
 * always has its event and a rolled-back one never does. `data` is the record exactly as
 * GET returns it after the change. The delivery worker is woken after commit; when it offered a
 * lease (it has room), the deliveries are written already leased to it and it sends them then.
 */
export async function emit<T>(scope: TxScope, ctx: TenantContext, event: EventName, data: T | Rendered<T>): Promise<EventEnvelope<T | Rendered<T>>> {
  const envelope: EventEnvelope<T | Rendered<T>> = {
    id: newId('evt'),
    event,
    timestamp: ctx.clock.now().toISOString(),
    tenant_id: ctx.tenantId,
    data,
  }
  // A record already rendered (lib/rendered.ts) goes in as its text: the same JSON, not built again.
  const payload = data instanceof Rendered
    ? `{"id":"${envelope.id}","event":"${event}","timestamp":"${envelope.timestamp}","tenant_id":"${ctx.tenantId}","data":${data.json}}`
    : JSON.stringify(envelope)
  const { webhookIds, jobs } = await ctx.engine.writeEvent(scope.tx, { id: envelope.id, tenantId: ctx.tenantId, name: event, at: envelope.timestamp, payload }, ctx.lease?.(ctx.tenantId))
  // Once committed: the delivery worker, when there are deliveries, and the event streams (engine/port.ts EventFeed).
  scope.afterCommit(webhookIds.length > 0
    ? () => {
      ctx.notify(jobs ? { tenantId: ctx.tenantId, webhookIds, jobs } : { tenantId: ctx.tenantId, webhookIds })
      ctx.engine.feed.committed()
    }
    : () => ctx.engine.feed.committed())
  return envelope
}

/**
 * A test event (CONTRACT §11): the envelope says `"test": true`, and its one delivery goes to
 * the given subscription only — recorded, signed and retried like any other. Same transaction
 * rules as emit(). Returns the delivery's id.
 */
export async function emitTest(scope: TxScope, ctx: TenantContext, webhookId: string, event: EventName, data: unknown): Promise<string> {
  const envelope: EventEnvelope & { test: true } = {
    id: newId('evt'), event, timestamp: ctx.clock.now().toISOString(), tenant_id: ctx.tenantId, data, test: true,
  }
  await insertEvent(scope.tx, envelope.id, ctx.tenantId, event, JSON.stringify(envelope), envelope.timestamp)
  const id = newId('del')
  await insertDelivery(scope.tx, id, ctx.tenantId, webhookId, envelope.id, event, envelope.timestamp, null, null)
  scope.afterCommit(() => {
    ctx.notify({ tenantId: ctx.tenantId, webhookIds: [webhookId] })
    ctx.engine.feed.committed()
  })
  return id
}
