/**
 * Fan-out matching (CONTRACT §7, §8): an event gets one delivery per subscription of its tenant
 * that is active, not deleted, and asked for its name or for `*`. `events` is the stored column,
 * a JSON array of names; anything else (a row written behind the API's back) matches nothing
 * rather than failing the transaction that emits the event.
 *
 * SQLite's outbox (engine/sqlite/outbox.ts) filters with this; PostgreSQL's matches in its
 * one statement (jsonb `?`), checked against this by test/db/delivery-rules-agree.test.ts.
 */
export interface WebhookFilter {
  active: number
  deleted_at: string | null
  events: string
}

export function receives(w: WebhookFilter, eventName: string): boolean {
  return w.active === 1 && w.deleted_at === null && wantsEvent(w.events, eventName)
}

/** Whether a stored `events` column asks for this event name. */
export function wantsEvent(events: string, eventName: string): boolean {
  try {
    const list: unknown = JSON.parse(events)
    return Array.isArray(list) && (list.includes(eventName) || list.includes('*'))
  } catch {
    return false
  }
}
