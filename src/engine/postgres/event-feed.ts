import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import pg from 'pg'
import type { Db } from '../../db/connect.ts'
import { FeedWatchers } from '../feed-watchers.ts'
import type { EventFeed, FeedEvent } from '../port.ts'

/**
 * PostgreSQL's event feed (EventFeed, engine/port.ts). Several processes write at once, and a
 * transaction may commit after one that made its ids later: ids are no commit order. Each event
 * records the transaction that wrote it (events.tx, migrations/postgres/0020_event_feed.sql),
 * and the feed reads only events of transactions older than every transaction still running
 * (the snapshot's xmin): those have all ended, so no event can later commit before a position
 * read past. A position is the transaction, zero-padded to compare as text, then the id.
 * The cost: while a write transaction of the cluster runs long, the events committed after it
 * started wait for it to end (travelops' own write transactions are short by design:
 * docs/decisions/0064-event-stream.md). A read that finds events waiting so wakes the watchers
 * again HELD_MS later, and so on until they are read: they come within HELD_MS of its end.
 *
 * Wake-ups: this process's commits at once; other processes' through NOTIFY on a channel of its
 * own, sent after commit (never inside the writing transaction, where NOTIFY's lock would order
 * every commit of the database behind it), at most once every 100 ms per process. The LISTEN
 * connection opens with the first watcher and closes with the last.
 */
const CHANNEL = 'travelops_events'
const NOTIFY_EVERY_MS = 100
const RECONNECT_MS = 1_000
const HELD_MS = 50

const _pos = (tx: string, id: string) => `${tx.padStart(20, '0')}/${id}`

export function pgEventFeed(db: Db, url: string): EventFeed & { close(): Promise<void> } {
  const watchers = new FeedWatchers()
  const self = randomUUID()
  let listener: pg.Client | undefined
  let retry: NodeJS.Timeout | undefined
  let notifyTimer: NodeJS.Timeout | undefined
  let notifyAgain = false
  let closed = false

  // Events held back by an older transaction (after()): the watchers read again every HELD_MS
  // until it has ended, instead of at their next poll.
  let heldTimer: NodeJS.Timeout | undefined
  const heldBack = () => {
    if (heldTimer || closed) return
    heldTimer = setTimeout(() => {
      heldTimer = undefined
      watchers.wake()
    }, HELD_MS)
    heldTimer.unref()
  }

  const notify = () => {
    if (notifyTimer) {
      notifyAgain = true
      return
    }
    sql`select pg_notify(${CHANNEL}, ${self})`.execute(db).catch(() => {}) // a lost NOTIFY: the stream's 1 s poll finds the events
    notifyTimer = setTimeout(() => {
      notifyTimer = undefined
      if (notifyAgain) {
        notifyAgain = false
        notify()
      }
    }, NOTIFY_EVERY_MS)
    notifyTimer.unref()
  }

  const listen = async (): Promise<void> => {
    if (closed || listener || watchers.size === 0) return
    const client = new pg.Client({ connectionString: url, application_name: 'travelops events' })
    listener = client
    const lost = () => {
      if (listener !== client) return
      listener = undefined
      client.end().catch(() => {})
      if (!closed && watchers.size > 0) retry = setTimeout(() => void listen(), RECONNECT_MS)
    }
    client.on('error', lost)
    client.on('end', lost)
    client.on('notification', (msg) => {
      if (msg.channel === CHANNEL && msg.payload !== self) watchers.wake()
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${CHANNEL}`)
    } catch {
      lost()
      return
    }
    // Events may have committed while nobody listened.
    watchers.wake()
  }

  const unlisten = async () => {
    clearTimeout(retry)
    const client = listener
    listener = undefined
    await client?.end().catch(() => {})
  }

  return {
    head: async () => {
      const { rows } = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(db)
      return _pos(rows[0]!.xmin, '')
    },
    resumeAfter: async (tenantId, id) => {
      const { rows } = await sql<{ tx: string; id: string }>`(select tx::text as tx, id from events where tenant_id = ${tenantId} and id = ${id})
        union all (select tx::text, '' from events where tenant_id = ${tenantId} and id > ${id} order by id limit 1)`.execute(db)
      const found = rows[0]
      if (found) return _pos(found.tx, found.id)
      // Nothing kept after it either: from now on.
      const { rows: now } = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(db)
      return _pos(now[0]!.xmin, '')
    },
    after: async (tenantIds, position, limit): Promise<FeedEvent[]> => {
      if (tenantIds.length === 0) return []
      const slash = position.indexOf('/')
      const tx = position.slice(0, slash).replace(/^0+(?=\d)/, '')
      const id = position.slice(slash + 1)
      // One statement, one snapshot: the events ready, and whether any tenant asked for has an
      // event that waits for an older transaction still running (`held`: that transaction's end
      // announces nothing, so the watchers are woken again soon; one probe of the index's last
      // entry a tenant). ORDER BY names the table's columns: a bare `tx` is the output column,
      // the number as text, which put '1002' before '997' and let a stream pass the events in
      // between.
      const { rows } = await sql<{ tx: string | null; id: string | null; tenant_id: string; name: string; payload: string; held: boolean }>`
        with s as (select pg_snapshot_xmin(pg_current_snapshot()) as xmin)
        select r.tx::text as tx, r.id, r.tenant_id, r.name, r.payload,
          exists(select from unnest(${tenantIds as string[]}::text[]) u(t)
            where (select tx from events where tenant_id = u.t order by tx desc limit 1) >= (select xmin from s)) as held
        from (select) one left join lateral (select events.tx, events.id, events.tenant_id, events.name, events.payload from events
          where tenant_id = any(${tenantIds as string[]}::text[]) and (tx, id) > (${tx}::xid8, ${id}) and tx < (select xmin from s)
          order by events.tx, events.id limit ${limit}) r on true
        order by r.tx, r.id`.execute(db)
      if (rows[0]?.held) heldBack()
      return rows.flatMap((r) => r.id === null ? [] : [{ position: _pos(r.tx!, r.id), id: r.id, tenantId: r.tenant_id, name: r.name, payload: r.payload }])
    },
    watch: async (wake) => {
      const remove = watchers.add(wake)
      await listen()
      return async () => {
        remove()
        if (watchers.size === 0) await unlisten()
      }
    },
    committed: () => {
      watchers.wake()
      notify()
    },
    close: async () => {
      closed = true
      clearTimeout(notifyTimer)
      clearTimeout(heldTimer)
      await unlisten()
    },
  }
}
