import type { Db } from '../../db/connect.ts'
import { FeedWatchers } from '../feed-watchers.ts'
import type { EventFeed, FeedEvent } from '../port.ts'

/**
 * SQLite's event feed (EventFeed, engine/port.ts): the position of an event is its id. One
 * process writes, one transaction at a time, and every event id is made inside the transaction
 * that writes it by newId(), whose ids increase within a process: so ids commit in increasing
 * order, and an id read past is never followed by a smaller one. The events_tenant index
 * (tenant_id, id) serves every read. Wake-ups come from this process only: no other writes.
 */
export function sqliteEventFeed(db: Db): EventFeed {
  const watchers = new FeedWatchers()
  return {
    head: async () => (await db.selectFrom('events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst())?.id ?? '',
    // The id itself, kept or not: the events after it are those made after it.
    resumeAfter: async (_tenantId, id) => id,
    after: async (tenantIds, position, limit): Promise<FeedEvent[]> => {
      if (tenantIds.length === 0) return []
      const rows = await db.selectFrom('events').select(['id', 'tenant_id', 'name', 'payload'])
        .where('tenant_id', 'in', tenantIds).where('id', '>', position).orderBy('id').limit(limit).execute()
      return rows.map((r) => ({ position: r.id, id: r.id, tenantId: r.tenant_id, name: r.name, payload: r.payload }))
    },
    watch: async (wake) => {
      const remove = watchers.add(wake)
      return async () => remove()
    },
    committed: () => watchers.wake(),
  }
}
