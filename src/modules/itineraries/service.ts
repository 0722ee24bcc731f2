import type { TenantContext } from '../../context.ts'
import type { ItineraryRow, ItineraryUpdate } from '../../db/schema.ts'
import { withTx } from '../../engine/tx.ts'
import { emit } from '../../events/emit.ts'
import { InvalidError, NotFoundError, type ErrorDetail } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { jsonString } from '../../lib/json.ts'
import { changedColumns, parseJson, toMetadataJson } from '../fields.ts'
import { assertRefs } from '../refs.ts'
import * as repo from './repo.ts'
import type { CreateItineraryInput, Itinerary, ItineraryDay, ItineraryDayValue, UpdateItineraryInput } from './schema.ts'

const DAY_MS = 86_400_000

export function toItinerary(row: ItineraryRow): Itinerary {
  return {
    id: row.id,
    title: row.title,
    orderId: row.order_id,
    customerId: row.customer_id,
    startDate: row.start_date,
    endDate: row.end_date,
    days: JSON.parse(row.days) as ItineraryDay[],
    metadata: parseJson<Record<string, string>>(row.metadata) ?? {},
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

/**
 * `JSON.stringify(toItinerary(row))` written straight from the row: the days and metadata passed
 * through as stored (JSON.stringify's own output, which re-parsing and re-serialising gives back
 * byte for byte). Checked against toItinerary() on random rows (test/unit/record-json.test.ts).
 */
export function itineraryJson(row: ItineraryRow): string {
  return `{"id":${JSON.stringify(row.id)},"title":${JSON.stringify(row.title)},"orderId":${jsonString(row.order_id)},"customerId":${jsonString(row.customer_id)},"startDate":${JSON.stringify(row.start_date)},"endDate":${JSON.stringify(row.end_date)},"days":${row.days},"metadata":${row.metadata ?? '{}'},"createdAt":${JSON.stringify(row.created_at)},"updatedAt":${JSON.stringify(row.updated_at)}}`
}

export async function createItinerary(ctx: TenantContext, input: CreateItineraryInput): Promise<Itinerary> {
  _checkSchedule(input.startDate, input.endDate, input.days, 'endDate')
  return withTx(ctx.engine, async (scope) => {
    await assertRefs(scope.tx, ctx.tenantId, { orderId: ['orderId', input.orderId], customerId: ['customerId', input.customerId] })
    const now = ctx.clock.now().toISOString()
    const row: ItineraryRow = {
      id: newId('iti'),
      tenant_id: ctx.tenantId,
      title: input.title,
      order_id: input.orderId ?? null,
      customer_id: input.customerId ?? null,
      start_date: input.startDate,
      end_date: input.endDate,
      days: _days(input.days),
      metadata: toMetadataJson(input.metadata),
      created_at: now,
      updated_at: now,
    }
    await repo.insertItinerary(scope.tx, row)
    const itinerary = toItinerary(row)
    await emit(scope, ctx, 'itinerary.created', itinerary)
    return itinerary
  })
}

export async function getItinerary(ctx: TenantContext, id: string): Promise<Itinerary> {
  const row = await repo.findItinerary(ctx.db, ctx.tenantId, id)
  if (!row) throw new NotFoundError(`No itinerary ${id}`)
  return toItinerary(row)
}

export function listItineraries(ctx: TenantContext, q: Omit<repo.ItineraryFilter, 'after'> & { cursor?: string }): ReturnType<typeof repo.listItineraries> {
  return repo.listItineraries(ctx.db, ctx.tenantId, { ...q, after: q.cursor })
}

/** Fields given replace; `null` clears an optional one. The schedule is checked as it will be after the change. No event. */
export function updateItinerary(ctx: TenantContext, id: string, input: UpdateItineraryInput): Promise<Itinerary> {
  return withTx(ctx.engine, async (scope) => {
    const row = await repo.findItinerary(scope.tx, ctx.tenantId, id)
    if (!row) throw new NotFoundError(`No itinerary ${id}`)
    const set: ItineraryUpdate = {}
    if (input.title !== undefined) set.title = input.title
    if (input.orderId !== undefined) set.order_id = input.orderId
    if (input.customerId !== undefined) set.customer_id = input.customerId
    if (input.startDate !== undefined) set.start_date = input.startDate
    if (input.endDate !== undefined) set.end_date = input.endDate
    if (input.days !== undefined) set.days = _days(input.days)
    if (input.metadata !== undefined) set.metadata = toMetadataJson(input.metadata)
    const changed = changedColumns(row, set)
    if (changed.length === 0) return toItinerary(row)
    const days = input.days ?? (JSON.parse(row.days) as ItineraryDay[])
    _checkSchedule(set.start_date ?? row.start_date, set.end_date ?? row.end_date, days, input.endDate !== undefined ? 'endDate' : 'startDate')
    await assertRefs(scope.tx, ctx.tenantId, {
      orderId: ['orderId', changed.includes('order_id') ? set.order_id : null],
      customerId: ['customerId', changed.includes('customer_id') ? set.customer_id : null],
    })
    set.updated_at = ctx.clock.now().toISOString()
    await repo.updateItinerary(scope.tx, ctx.tenantId, id, set)
    return toItinerary({ ...row, ...set } as ItineraryRow)
  })
}

export async function deleteItinerary(ctx: TenantContext, id: string): Promise<{ id: string; deleted: true }> {
  return withTx(ctx.engine, async (scope) => {
    if (!(await repo.deleteItinerary(scope.tx, ctx.tenantId, id))) throw new NotFoundError(`No itinerary ${id}`)
    return { id, deleted: true as const }
  })
}

/**
 * endDate ≥ startDate; each day's number is unique and within the trip's length (day 1 is
 * startDate); a day's date, when given, lies within startDate..endDate. 422 listing each problem.
 */
function _checkSchedule(start: string, end: string, days: readonly ItineraryDayValue[], rangePath: 'startDate' | 'endDate'): void {
  if (end < start) {
    const message = rangePath === 'endDate' ? `must not be before startDate ${start}` : `must not be after endDate ${end}`
    throw new InvalidError([{ path: rangePath, message }])
  }
  const length = (Date.parse(end) - Date.parse(start)) / DAY_MS + 1
  const details: ErrorDetail[] = []
  const seen = new Set<number>()
  days.forEach((d, i) => {
    if (d.day > length) details.push({ path: `days[${i}].day`, message: `must be at most ${length}, the number of days from startDate to endDate` })
    else if (seen.has(d.day)) details.push({ path: `days[${i}].day`, message: `day ${d.day} is listed more than once` })
    seen.add(d.day)
    if (d.date != null && (d.date < start || d.date > end)) {
      details.push({ path: `days[${i}].date`, message: `must be within startDate ${start} and endDate ${end}` })
    }
  })
  if (details.length) throw new InvalidError(details)
}

function _days(days: readonly ItineraryDayValue[]): string {
  const stored: ItineraryDay[] = days.map((d) => ({
    day: d.day, date: d.date ?? null, title: d.title, description: d.description ?? null, items: d.items ?? [],
  }))
  return JSON.stringify(stored)
}
