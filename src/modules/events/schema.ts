import * as v from 'valibot'
import { EVENT_NAMES, isEventName, type EventName } from '../../events/catalog.ts'
import { idPattern } from '../../lib/ids.ts'
import { documented } from '../../lib/schema-hints.ts'
import { timestampQuery } from '../fields.ts'

/** `order` of `order.created`: the families a `type` filter may name as `order.*`, from the catalog (a new family joins by itself). */
export const EVENT_FAMILIES: readonly string[] = [...new Set(EVENT_NAMES.map((n) => n.slice(0, n.indexOf('.'))))]

/**
 * GET /v1/events `type`: comma-separated event names or families (`order.*`), no spaces; the
 * names it stands for, each once, in the catalog's order. An unknown name or family is a 400
 * naming it, as an unknown name in a subscription's `events` is a 422 (docs/decisions/0062-events-api.md).
 */
export const EventTypeQuery = v.pipe(
  v.string(),
  v.description('Comma-separated event names (`order.created,payment.received`) or families (`order.*`: every `order.` event), without spaces; left out: every event'),
  v.examples(['order.*,payment.received']),
  documented(v.check((s: string) => _unknownType(s) === undefined, (issue) => _typeMessage(String(issue.input))), {
    pattern: _typePattern(),
  }),
  v.transform((s: string): EventName[] => {
    const parts = s.split(',')
    return EVENT_NAMES.filter((n) => parts.includes(n) || parts.includes(`${n.slice(0, n.indexOf('.'))}.*`))
  }),
)

export const ListEventsQuery = {
  type: v.optional(EventTypeQuery),
  created_after: v.optional(timestampQuery('Only events created after this time (exclusive)', '2027-06-01T09:30:00Z')),
  created_before: v.optional(timestampQuery('Only events created before this time (exclusive)', '2027-06-02T00:00:00Z')),
  order: v.optional(v.pipe(
    v.picklist(['desc', 'asc'], "must be 'desc' or 'asc'"),
    v.description('`desc` (default): newest first; `asc`: oldest first. A `cursor` goes on in the order of the page that wrote it'),
  ), 'desc'),
}

export type ListEventsInput = { limit: number; cursor?: string; type?: EventName[]; created_after?: string; created_before?: string; order: 'asc' | 'desc' }

/** The first part of `s` that names no event or family, or undefined when every part does. */
function _unknownType(s: string): string | undefined {
  for (const part of s.split(',')) {
    const known = part.endsWith('.*') ? EVENT_FAMILIES.includes(part.slice(0, -2)) : isEventName(part)
    if (!known) return part
  }
  return undefined
}

function _typeMessage(s: string): string {
  const part = _unknownType(s) ?? ''
  if (part === '') return 'must name events or families separated by commas (`order.created,payment.*`), without empty names'
  if (part.endsWith('.*')) return `unknown event family '${part}' (families: ${EVENT_FAMILIES.join(', ')})`
  return `unknown event name '${part}'`
}

/** The same rule as JSON Schema: one name or family, then more after commas. */
function _typePattern(): string {
  const one = `(?:${[...EVENT_NAMES.map((n) => n.replace('.', '\\.')), ...EVENT_FAMILIES.map((f) => `${f}\\.\\*`)].join('|')})`
  return `^${one}(?:,${one})*$`
}

/** An event id as `?after=` and Last-Event-ID name it. */
export const EventIdInput = v.pipe(v.string(), v.regex(idPattern('evt'), 'must be an event id (evt_…)'))

/** GET /v1/events/stream's query: the `type` filter, and where to resume without Last-Event-ID. */
export const StreamEventsQuery = {
  type: v.optional(EventTypeQuery),
  after: v.optional(v.pipe(EventIdInput, v.description('Resume after this event (as `Last-Event-ID` does; the header wins when both are given): the tenant\'s events after it that are still kept come first, in order'))),
}
