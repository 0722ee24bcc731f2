import assert from 'node:assert/strict'
import type { Reply, TestApp } from './app.ts'
import { scenarios, type Fixture, type Scenario } from './scenario.ts'

/** One row of the `events` table with its envelope parsed. */
export interface StoredEvent {
  id: string
  tenant_id: string
  name: string
  payload: { id: string; event: string; timestamp: string; tenant_id: string; data: any }
}

export async function allEvents(app: TestApp): Promise<StoredEvent[]> {
  const rows = await app.server.deps.db.selectFrom('events').selectAll().orderBy('id').execute()
  return rows.map((r) => ({ id: r.id, tenant_id: r.tenant_id, name: r.name, payload: JSON.parse(r.payload) }))
}

/** A scenario row that also names the events it must write (none when omitted). */
export interface EventScenario<F extends Fixture> extends Scenario<F> {
  events?: string[]
}

/**
 * `scenarios()` where every row also proves the outbox: exactly the listed events were
 * written by that request (none for failures, no-ops, deletes), each for the caller's
 * tenant, with `data` equal both to the response and to what GET returns afterwards.
 */
export function eventScenarios<F extends Fixture>(title: string, setup: (base: Fixture) => Promise<F>, rows: EventScenario<F>[]): void {
  const seen = new Set<string>()
  const markSeen = async (app: TestApp) => {
    for (const e of await allEvents(app)) seen.add(e.id)
  }
  scenarios<F>(
    title,
    async (base) => {
      const f = await setup(base)
      await markSeen(f.app)
      return f
    },
    rows.map((row) => ({
      ...row,
      check: async (reply: Reply, f: F) => {
        const fresh = (await allEvents(f.app)).filter((e) => !seen.has(e.id))
        await markSeen(f.app)
        assert.deepEqual(fresh.map((e) => e.name), row.events ?? [], 'events written by this request')
        const owner = row.as === 'other' ? f.other : f.tenant
        const path = typeof row.path === 'function' ? row.path(f) : row.path
        for (const e of fresh) {
          assert.equal(e.tenant_id, owner.id)
          assert.equal(e.payload.tenant_id, owner.id)
          assert.equal(e.payload.event, e.name)
          assert.equal(e.payload.id, e.id)
          assert.deepEqual(e.payload.data, reply.body.data, 'event data equals the response')
          const get = await owner.request('GET', row.method === 'POST' ? `${path.split('?')[0]}/${reply.body.data.id}` : path)
          assert.equal(get.status, 200)
          assert.deepEqual(e.payload.data, get.body.data, 'event data equals GET afterwards')
        }
        await row.check?.(reply, f)
        await markSeen(f.app)
      },
    })),
  )
}

/** A well-formed id of that prefix that names nothing. */
export const unknownId = (prefix: string) => `${prefix}_01900000-0000-7000-8000-000000000000`

/** Asserts a 422/400 names these paths (in any order) among its details. */
export function hasPaths(reply: Reply, ...paths: string[]): void {
  const got = (reply.body.error.details as { path: string }[]).map((d) => d.path)
  for (const p of paths) assert.ok(got.includes(p), `details name ${p} (got ${got.join(', ')})`)
}

/** Asserts the detail at `path` says the field is read-only. */
export function isReadOnly(reply: Reply, path: string): void {
  const d = (reply.body.error.details as { path: string; message: string }[]).find((x) => x.path === path)
  assert.ok(d, `a detail for ${path}`)
  assert.match(d.message, /read-only/)
}

/** Every record of a list, following `next_cursor`. */
export async function listAll(get: (path: string) => Promise<Reply>, path: string, limit = 100): Promise<any[]> {
  const out: any[] = []
  let cursor: string | null = null
  do {
    const sep = path.includes('?') ? '&' : '?'
    const r: Reply = await get(`${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)
    assert.equal(r.status, 200, r.text)
    out.push(...r.body.data)
    cursor = r.body.next_cursor
  } while (cursor)
  return out
}
