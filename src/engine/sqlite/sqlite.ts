import Database from 'better-sqlite3'
import { chmodSync, closeSync, existsSync, openSync, readSync } from 'node:fs'
import { isSea } from 'node:sea'
import type { SqliteDatabase } from '../../db/connect.ts'
import { loadSeaNativeAddon } from './native-addon.ts'

export type { SqliteDatabase }

/**
 * Opens the SQLite file with the pragmas every travelops process relies on.
 * WAL lets CLI commands read and write while `serve` runs; synchronous=NORMAL in WAL
 * mode survives a killed process (a power loss may lose the last commits, never corrupt).
 *
 * In the packaged executable (a Node SEA) there is no node_modules to load better-sqlite3's
 * native addon from: it travels inside the executable as an asset, is extracted once to a
 * cache directory and handed to better-sqlite3 as `nativeBinding` (see native-addon.ts).
 */
export function openSqlite(file: string, opts: { readonly?: boolean } = {}): SqliteDatabase {
  const options: Database.Options = { readonly: opts.readonly ?? false }
  // @types/better-sqlite3 only knows the path form; better-sqlite3 also takes the addon object.
  if (isSea()) options.nativeBinding = loadSeaNativeAddon() as unknown as string
  // A new database is owner-only (CONTRACT §9: it holds webhook secrets and receivers' header
  // values); SQLite gives its -wal and -shm files the database file's permissions.
  if (!options.readonly && file !== ':memory:' && !existsSync(file)) {
    closeSync(openSync(file, 'a', 0o600))
    chmodSync(file, 0o600)
  }
  const db = new Database(file, options)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  // A 4 MB page cache (SQLite's default here is 16 MB): pages beyond it are read again from the
  // operating system's cache, which costs no CPU per request that the benchmark could measure
  // (GET by id 145 µs against 154, a list 283 against 271), and serve's peak RSS falls by 11 MB
  db.pragma('cache_size = -4000')
  // Temporary data in memory, above all the sub-journal: group commit (tx.ts) runs each member
  // in a savepoint, which keeps the pages it changes as they were; past 64 KiB SQLite spilled
  // them to a new file in /var/tmp per group, two writes per page, two thirds of a POST's system
  // time under load (POST 258 -> 216-223 µs of CPU). Sorts and temporary indexes stay in memory too: ours follow an index or are small
  // (the attempts histogram's groups: one per hour or day and duration).
  db.pragma('temp_store = MEMORY')
  return db
}

/**
 * Opens an existing file only to look at it: no pragmas, nothing written, and no -wal or -shm
 * file left beside it (CONTRACT §16: refusing a database writes nothing). Throws when the file is
 * missing or is not a SQLite database.
 *
 * A read-only connection to a file in WAL mode creates the -wal and -shm files when they are
 * missing and, being read-only, cannot remove them again. So a WAL-mode file without a -wal
 * (nothing to recover: every commit is in the file) is opened read-write instead and only read:
 * SQLite removes the -wal and -shm it made when its last connection closes (an empty WAL: no
 * checkpoint writes a page). Any other file (rollback journal, or a WAL already there, whose
 * owner keeps its files) is opened read-only, as SQLite then creates nothing beside it.
 */
export function openSqliteToInspect(file: string): SqliteDatabase {
  const options: Database.Options = { readonly: !_walWithoutLog(file), fileMustExist: true }
  if (isSea()) options.nativeBinding = loadSeaNativeAddon() as unknown as string
  const db = new Database(file, options)
  try {
    db.prepare('SELECT count(*) FROM sqlite_schema').get() // "file is not a database" shows here
  } catch (err) {
    db.close()
    throw err
  }
  return db
}

/** A SQLite file whose header says WAL (read and write versions 2) and that has no -wal beside it. */
function _walWithoutLog(file: string): boolean {
  if (file === ':memory:' || existsSync(`${file}-wal`)) return false
  const header = Buffer.alloc(20)
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch {
    return false
  }
  try {
    if (readSync(fd, header, 0, 20, 0) < 20) return false
  } finally {
    closeSync(fd)
  }
  return header.toString('latin1', 0, 16) === 'SQLite format 3\0' && header[18] === 2 && header[19] === 2
}
