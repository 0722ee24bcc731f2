import type { OpenOptions } from '../db/connect.ts'
import type { OpenDb } from './port.ts'
import { isPostgresUrl, redactUrl } from './postgres/common.ts'

// The one place that picks an engine's adapter: by what `--db` names, a `postgres://` URL
// (CONTRACT §10) or a SQLite file. Each adapter is loaded only when chosen, so SQLite loads no
// PostgreSQL code and the other way round.

/**
 * Opens the database `--db` names, with its engine (engine/port.ts), after looking at it without
 * writing (CONTRACT §10, opening safely: throws DatabaseRefused).
 */
export async function openDatabase(target: string, opts: OpenOptions = {}): Promise<OpenDb> {
  if (isPostgresUrl(target)) return (await import('./postgres/engine.ts')).openPostgresDatabase(target, opts)
  return (await import('./sqlite/open.ts')).openSqliteDatabase(target, opts)
}

/**
 * The database for `serve`. SQLite: one serve per file (checked before migrating, so a refused
 * start writes nothing), locked until `unlock()`. PostgreSQL: any number of serve processes;
 * migrations under an advisory lock.
 */
export async function openForServe(target: string, serveId: string, now: Date): Promise<{ opened: OpenDb; unlock: () => void }> {
  if (isPostgresUrl(target)) return { opened: await openDatabase(target, { create: true, migrate: true }), unlock: () => {} }
  return (await import('./sqlite/open.ts')).openSqliteForServe(target, serveId, now)
}

/** `--db` as messages may show it: a URL without its password. */
export function shownTarget(target: string): string {
  return isPostgresUrl(target) ? redactUrl(target) : target
}

/**
 * Why `backup` cannot copy this database, or undefined: it copies a SQLite file; PostgreSQL is
 * backed up with its own tools.
 */
export function backupRefusal(target: string): string | undefined {
  return isPostgresUrl(target)
    ? 'backup copies a SQLite database file; back up PostgreSQL with its own tools, e.g. pg_dump --format=custom --file=travelops.dump "$DATABASE_URL"'
    : undefined
}

/** `backup` of a SQLite file (engine/sqlite/backup.ts), once backupRefusal() has said nothing; loaded only when called. */
export async function backupTo(...args: Parameters<typeof import('./sqlite/backup.ts').backupTo>): ReturnType<typeof import('./sqlite/backup.ts').backupTo> {
  return (await import('./sqlite/backup.ts')).backupTo(...args)
}

/**
 * Looks at the database before a command opens it, without writing (CONTRACT §10): a SQLite
 * file's state is checked here; a PostgreSQL database when openDatabase() connects.
 */
export async function assertUsableBeforeOpen(target: string, opts: { create: boolean; allowPending?: boolean }): Promise<void> {
  if (isPostgresUrl(target)) return
  const [{ assertUsable }, { inspectSqlite }] = await Promise.all([import('../db/inspect.ts'), import('./sqlite/inspect.ts')])
  assertUsable(inspectSqlite(target), target, opts)
}
