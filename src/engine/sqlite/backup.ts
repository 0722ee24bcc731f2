import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync, rmSync, statSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { openSqlite } from './sqlite.ts'

const STEP_PAGES = 1024

export interface BackupResult {
  /** Size of the copy. */
  bytes: number
  /** Database pages copied. */
  pages: number
}

/**
 * Copies the database `file` to `dest` while other processes (a running `serve`) keep reading
 * and writing it. SQLite's online backup API copies the pages in steps under one read
 * transaction, so the copy is a single consistent snapshot; in WAL mode that read does not
 * block writers. The copy goes to a temporary file beside `dest`, is flushed to disk, then
 * moved into place, so `dest` is never seen half-written. An existing `dest` is refused
 * (atomically: by hard link) unless `overwrite`. The copy gets the permissions of `file`: it
 * holds the same secrets (webhook signing secrets).
 */
export async function backupTo(
  file: string,
  dest: string,
  opts: { overwrite?: boolean; onProgress?: (copiedBytes: number, totalBytes: number) => void } = {},
): Promise<BackupResult> {
  if (!existsSync(file)) throw new Error(`no database at ${file}`)
  if (!opts.overwrite && existsSync(dest)) throw new Error(`${dest} exists; pass --force to replace it`)
  const tmp = join(dirname(dest), `.${basename(dest)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
  const db = openSqlite(file)
  try {
    // Owner-only from the first byte (CONTRACT §9: it holds webhook secrets), whatever the umask.
    closeSync(openSync(tmp, 'wx', 0o600))
    chmodSync(tmp, 0o600)
    // One read transaction held across every step: the copy is the snapshot of its start, and
    // writers (serve) go on meanwhile; without it a change made between two steps would start
    // the copy over. Steps of 1024 pages let the caller show progress.
    const pageSize = db.pragma('page_size', { simple: true }) as number
    db.prepare('BEGIN').run()
    db.prepare('SELECT count(*) FROM sqlite_schema').get()
    let progress
    try {
      progress = await db.backup(tmp, {
        progress: ({ totalPages, remainingPages }) => {
          opts.onProgress?.((totalPages - remainingPages) * pageSize, totalPages * pageSize)
          return STEP_PAGES
        },
      })
    } finally {
      db.prepare('COMMIT').run()
    }
    // better-sqlite3 reports before each step, not after the last: the copy is complete here.
    opts.onProgress?.(progress.totalPages * pageSize, progress.totalPages * pageSize)
    _fsync(tmp)
    _place(tmp, dest, opts.overwrite ?? false)
    _fsyncDir(dirname(dest))
    return { bytes: statSync(dest).size, pages: progress.totalPages }
  } finally {
    db.close()
    for (const leftover of [tmp, `${tmp}-journal`, `${tmp}-wal`, `${tmp}-shm`]) rmSync(leftover, { force: true })
  }
}

function _place(tmp: string, dest: string, overwrite: boolean): void {
  if (overwrite) return renameSync(tmp, dest)
  try {
    linkSync(tmp, dest) // fails with EEXIST rather than replacing a file that appeared meanwhile
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EEXIST') throw new Error(`${dest} exists; pass --force to replace it`)
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw err
    // A filesystem without hard links: check, then rename.
    if (existsSync(dest)) throw new Error(`${dest} exists; pass --force to replace it`)
    renameSync(tmp, dest)
  }
}

function _fsync(file: string): void {
  const fd = openSync(file, 'r+')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function _fsyncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r')
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch {
    // some filesystems cannot fsync a directory; the rename is still atomic
  }
}
