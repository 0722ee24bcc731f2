import { hostname } from 'node:os'
import type { Db } from './connect.ts'
import { procStart, processRuns } from './processes.ts'

// Where each `serve` listens (CONTRACT §16: `dashboard link` names it), in serve_processes,
// through the engine (Engine.recordServeUrl(), Engine.runningServeUrl()).

/** One serve per database (SQLite): the serve_processes row its lock wrote gets the URL. */
export async function recordUrlOnLock(db: Db, id: string, url: string): Promise<() => Promise<void>> {
  await db.updateTable('serve_processes').set({ url }).where('id', '=', id).execute()
  return async () => {}
}

/**
 * Several serve processes (PostgreSQL): a row of its own, after removing this host's rows whose
 * process is gone (a serve killed with SIGKILL); the function returned removes it when serve stops.
 */
export async function recordOwnRow(db: Db, id: string, url: string, now: Date): Promise<() => Promise<void>> {
  const host = hostname()
  const mine = await db.selectFrom('serve_processes').select(['id', 'pid', 'proc_start']).where('host', '=', host).execute()
  const gone = mine.filter((r) => !processRuns(r.pid, r.proc_start)).map((r) => r.id)
  if (gone.length) await db.deleteFrom('serve_processes').where('id', 'in', gone).execute()
  await db.insertInto('serve_processes').values({
    id, pid: process.pid, host, file: '', proc_start: procStart(process.pid), started_at: now.toISOString(), url,
  }).execute()
  return async () => {
    await db.deleteFrom('serve_processes').where('id', '=', id).execute()
  }
}

/**
 * The address of the newest running `serve` of this database, or undefined. A row of this host
 * counts while its process runs; a row of another host counts as it is when `otherHosts` (the
 * database is shared: its process cannot be checked from here, and it removes the row when it
 * stops). A wildcard listening address is named as localhost, which a browser can open. A
 * serve with --public-url records that address instead (with its path, if any).
 */
export async function runningServeUrl(db: Db, otherHosts: boolean): Promise<string | undefined> {
  const rows = await db.selectFrom('serve_processes').select(['pid', 'host', 'proc_start', 'url'])
    .where('url', 'is not', null).orderBy('started_at', 'desc').execute()
  const host = hostname()
  const live = rows.find((r) => (r.host === host ? processRuns(r.pid, r.proc_start) : otherHosts))
  if (!live?.url) return undefined
  const u = new URL(live.url)
  if (u.hostname === '0.0.0.0' || u.hostname === '[::]') u.hostname = 'localhost'
  // A --public-url may have a path (a proxy's prefix): it is kept.
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`
}
