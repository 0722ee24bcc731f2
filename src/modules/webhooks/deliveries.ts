import type { TenantContext } from '../../context.ts'
import type { DeliveryAttemptRow } from '../../db/schema.ts'
import { requeueDeliveries } from '../../delivery/requeue.ts'
import { withTx } from '../../engine/tx.ts'
import type { EventName } from '../../events/catalog.ts'
import { emitTest } from '../../events/emit.ts'
import { exampleData } from './event-examples.ts'
import { ConflictError, InvalidError, NotFoundError } from '../../lib/errors.ts'
import { JsonStream } from '../../lib/json-stream.ts'
import { Rendered } from '../../lib/rendered.ts'
import { jsonString, parseJson } from '../../lib/json.ts'
import * as repo from './repo.ts'
import type { Delivery, DeliveryDetail } from './schema.ts'

export function toDelivery(row: repo.DeliveryWithPayload): Delivery {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event: row.event as Delivery['event'],
    event_id: row.event_id,
    status: row.status as Delivery['status'],
    response_code: row.response_code,
    attempts: row.attempts,
    created_at: row.created_at,
    delivered_at: row.delivered_at,
    last_attempt_at: row.last_attempt_at,
    next_retry_at: row.status === 'failed' ? row.next_retry_at : null,
    payload: parseJson(row.payload) as DeliveryDetail['payload'],
  }
}

/**
 * `JSON.stringify(toDelivery(row))` in pieces, written straight from the row: the event's payload
 * passed through as stored — the text every attempt sends, JSON.stringify's own output (events/emit.ts),
 * which re-parsing and re-serialising gives back byte for byte — as a piece of its own, so a page of
 * large payloads is never parsed and never joined into one string per record (http/pagination.ts
 * toPage()). Checked against toDelivery() on random rows (test/unit/record-json.test.ts).
 */
export function deliveryJson(row: repo.DeliveryWithPayload): string[] {
  return [
    `{"id":${JSON.stringify(row.id)},"webhook_id":${JSON.stringify(row.webhook_id)},"event":${JSON.stringify(row.event)},"event_id":${JSON.stringify(row.event_id)},"status":${JSON.stringify(row.status)},"response_code":${row.response_code},"attempts":${row.attempts},"created_at":${JSON.stringify(row.created_at)},"delivered_at":${jsonString(row.delivered_at)},"last_attempt_at":${jsonString(row.last_attempt_at)},"next_retry_at":${row.status === 'failed' ? jsonString(row.next_retry_at) : 'null'},"payload":`,
    row.payload,
    '}',
  ]
}

export function listDeliveries(
  ctx: TenantContext,
  q: { limit: number; cursor?: string; webhook_id?: string; status?: string; event?: string; event_id?: string; created_after?: string },
): ReturnType<typeof repo.listDeliveries> {
  return repo.listDeliveries(ctx.db, ctx.tenantId, {
    webhookId: q.webhook_id, status: q.status, event: q.event, eventId: q.event_id, createdAfter: q.created_after, after: q.cursor, limit: q.limit,
  })
}

/**
 * Attempts read and rendered per turn of the event loop. Manual retries have no cap (CONTRACT §7),
 * so a log can grow to many thousands of attempts of up to 4 KB each: a log longer than this goes
 * out as a JsonStream, a window at a time, so no single turn renders (or holds) the whole log.
 */
export const ATTEMPT_WINDOW = 200

/**
 * The single-record view, the same JSON whether it is rendered whole or, for a long log, streamed.
 * Whole, it is rendered from the row as the list's record is (deliveryJson(): the payload as
 * stored, never parsed) with the attempt log after it: `JSON.stringify(toDeliveryWithAttempts())`.
 */
export async function getDelivery(ctx: TenantContext, id: string): Promise<Rendered<DeliveryDetail> | JsonStream> {
  const row = await repo.findDelivery(ctx.db, ctx.tenantId, id)
  if (!row) throw new NotFoundError(`No delivery ${id}`)
  if (row.attempts > ATTEMPT_WINDOW) return new JsonStream(toDelivery(row), 'attempt_log', _attemptWindows(ctx, id, row.attempts))
  const attempts = await repo.attemptsOf(ctx.db, ctx.tenantId, id)
  return Rendered.of(deliveryDetailJson(row, attempts), row, (r) => toDeliveryWithAttempts(r, attempts))
}

/** The attempts the record counted when read (numbered 1…attempts), a window at a time. */
async function* _attemptWindows(ctx: TenantContext, id: string, last: number): AsyncGenerator<DeliveryDetail['attempt_log']> {
  for (let after = 0; after < last;) {
    const rows = await repo.attemptWindow(ctx.db, ctx.tenantId, id, { after, last, limit: ATTEMPT_WINDOW })
    if (rows.length === 0) return // deleted meanwhile (retention): the log ends where it stood
    yield rows.map(_attemptView)
    after = rows[rows.length - 1]!.attempt
  }
}

/** The single-record view: the delivery and every attempt, oldest first. */
export function toDeliveryWithAttempts(row: repo.DeliveryWithPayload, attempts: readonly DeliveryAttemptRow[]): DeliveryDetail {
  return { ...toDelivery(row), attempt_log: attempts.map(_attemptView) }
}

/** `JSON.stringify(toDeliveryWithAttempts(row, attempts))`: deliveryJson() with the attempt log after it. */
export function deliveryDetailJson(row: repo.DeliveryWithPayload, attempts: readonly DeliveryAttemptRow[]): string {
  const [head, payload] = deliveryJson(row)
  return `${head}${payload},"attempt_log":${JSON.stringify(attempts.map(_attemptView))}}`
}

const _attemptView = (a: DeliveryAttemptRow): DeliveryDetail['attempt_log'][number] => ({
  attempt: a.attempt, at: a.at, trigger: a.trigger as DeliveryDetail['attempt_log'][number]['trigger'], response_code: a.response_code,
  duration_ms: a.duration_ms, error: a.error, response_body: a.response_body,
})

/** Queues an immediate new attempt of a delivered or failed record (not of one already waiting for its first). */
export async function retryDelivery(ctx: TenantContext, id: string): Promise<Rendered<DeliveryDetail> | JsonStream> {
  const row = await repo.findDelivery(ctx.db, ctx.tenantId, id)
  if (!row) throw new NotFoundError(`No delivery ${id}`)
  if (row.status === 'pending') throw new ConflictError(`Delivery ${id} has not had its first attempt yet`)
  const queued = await requeueDeliveries(ctx, { ids: [id] }, ctx.clock.now())
  if (queued.length === 0) throw new ConflictError(`The subscription of delivery ${id} is inactive or deleted`)
  ctx.notify()
  return getDelivery(ctx, id)
}

/**
 * POST /v1/webhooks/:id/test (CONTRACT §11): an example of `event` (default: the subscription's
 * first event, `order.created` for `*`) sent to this subscription only, as an ordinary delivery.
 * The event must be one the subscription receives (422 otherwise); an inactive subscription
 * gets nothing (409).
 */
export async function sendTestEvent(ctx: TenantContext, webhookId: string, input: { event?: EventName } | undefined): Promise<Delivery> {
  const id = await withTx(ctx.engine, async (scope) => {
    const webhook = await repo.findWebhook(scope.tx, ctx.tenantId, webhookId)
    if (!webhook) throw new NotFoundError(`No webhook ${webhookId}`)
    if (webhook.active !== 1) throw new ConflictError(`Webhook ${webhookId} is inactive; enable it (PATCH {"active": true}) to send it a test event`)
    const events = JSON.parse(webhook.events) as string[]
    const event = input?.event ?? (events[0] === '*' ? 'order.created' : events[0] as EventName)
    if (!events.includes('*') && !events.includes(event)) {
      throw new InvalidError([{ path: 'event', message: `this subscription does not receive '${event}' (it receives ${events.join(', ')})` }])
    }
    return emitTest(scope, ctx, webhookId, event, exampleData(event, ctx.tenantId, ctx.clock.now().toISOString()))
  })
  return toDelivery((await repo.findDelivery(ctx.db, ctx.tenantId, id))!)
}
