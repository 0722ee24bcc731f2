import { sqliteKysely, type OpenOptions } from '../../db/connect.ts'
import { type OpenSqliteDb } from '../port.ts'
import { assertUsable } from '../../db/inspect.ts'
import { inspectSqlite } from './inspect.ts'
import { migrate } from './migrate.ts'
import { acquireServeLock, assertNoOtherServe } from './process-lock.ts'
import { openSqlite } from './sqlite.ts'
import { sqliteEngine } from './engine.ts'

/**
 * Opens the database file, applies pending migrations (unless `migrate: false`) and returns
 * kysely on top of it with the file's engine.
 */
export function openDb(file: string, opts: { migrate?: boolean } = {}): OpenSqliteDb {
  const sqlite = openSqlite(file)
  if (opts.migrate !== false) migrate(sqlite)
  const { db, internals, close } = sqliteKysely(sqlite)
  const engine = sqliteEngine({ db, sqlite, internals, file, close })
  return { db, engine, sqlite, close }
}

/** openDatabase() (engine/open.ts) of a SQLite file: looked at without writing first (CONTRACT §10). */
export function openSqliteDatabase(file: string, opts: OpenOptions): OpenSqliteDb {
  assertUsable(inspectSqlite(file), file, { create: opts.create ?? false, allowPending: opts.allowPending })
  const opened = openDb(file, { migrate: false })
  if (opts.migrate) migrate(opened.sqlite, undefined, opts.observer)
  return opened
}

/**
 * The file for `serve`: one serve per file (checked before migrating, so a refused start writes
 * nothing), migrated, and locked for this serve until `unlock()`.
 */
export async function openSqliteForServe(file: string, serveId: string, now: Date): Promise<{ opened: OpenSqliteDb; unlock: () => void }> {
  assertUsable(inspectSqlite(file), file, { create: true }) // before anything is written
  const opened = openDb(file, { migrate: false })
  try {
    assertNoOtherServe(opened.sqlite, file)
    migrate(opened.sqlite)
    return { opened, unlock: acquireServeLock(opened.sqlite, file, serveId, now) }
  } catch (err) {
    await opened.close()
    throw err
  }
}
