import Database from 'better-sqlite3'

export type SqliteDatabase = Database.Database

/**
 * Opens the SQLite file with the pragmas every travelops process relies on.
 * WAL lets CLI commands read and write while `serve` runs; synchronous=NORMAL in WAL
 * mode survives a killed process (a power loss may lose the last commits, never corrupt).
 */
export function openSqlite(file: string, opts: { readonly?: boolean } = {}): SqliteDatabase {
  const db = new Database(file, { readonly: opts.readonly ?? false })
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  return db
}
