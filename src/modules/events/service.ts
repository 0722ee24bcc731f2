import type { TenantContext } from '../../context.ts'
import type { PageRows } from '../../db/page-rows.ts'
import { NotFoundError } from '../../lib/errors.ts'
import { parseJson } from '../../lib/json.ts'
import { Rendered } from '../../lib/rendered.ts'
import type { EventBody } from '../webhooks/index.ts'
import * as repo from './repo.ts'
import type { ListEventsInput } from './schema.ts'

/**
 * An event as the API shows it (CONTRACT §15): the envelope exactly as a delivery's body carries
 * it — the stored payload, written once by events/emit.ts and sent as is by every attempt
 * (delivery/worker/attempt.ts), passed through here unparsed, byte for byte.
 */
export const eventJson = (row: repo.StoredEvent): string => row.payload

/** The envelope as an object, for whatever reads a page's `data` (the JSON is eventJson()'s). */
export const toEvent = (row: repo.StoredEvent): EventBody => parseJson(row.payload) as EventBody

/** GET /v1/events: the tenant's events in id order (newest first unless `order` is `asc`). */
export function listEvents(ctx: TenantContext, q: ListEventsInput): Promise<PageRows<repo.StoredEvent>> {
  return repo.listEvents(ctx.db, ctx.tenantId, {
    names: q.type, createdAfter: q.created_after, createdBefore: q.created_before, order: q.order, after: q.cursor, limit: q.limit,
  })
}

/** GET /v1/events/:id: one event of the tenant; another tenant's, or one retention deleted, is not found. */
export async function getEvent(ctx: TenantContext, id: string): Promise<Rendered<EventBody>> {
  const row = await repo.findEvent(ctx.db, ctx.tenantId, id)
  if (!row) throw new NotFoundError(`No event ${id}`)
  return Rendered.of(eventJson(row), row, toEvent)
}
