import { realpathSync } from 'node:fs'
import { hostname } from 'node:os'
import type { Selectable } from 'kysely'
import type { ServeProcessesTable } from '../../db/schema.ts'
import { procStart, processRuns } from '../../db/processes.ts'
import type { SqliteDatabase } from './sqlite.ts'

/** Another `serve` runs on this database file (CONTRACT §9: one process per SQLite file). */
export class DatabaseInUseError extends Error {}

type ServeRow = Selectable<ServeProcessesTable>

/**
 * Refuses when a live `serve` has this file open; call before migrating, so a refused start
 * writes nothing. A database without the table yet has no `serve` of a version that records one.
 */
export function assertNoOtherServe(sqlite: SqliteDatabase, file: string): void {
  const exists = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'serve_processes'").get()
  if (!exists) return
  const other = _live(sqlite.prepare('SELECT * FROM serve_processes').all() as ServeRow[], _realpath(file))
  if (other) throw _inUse(file, other)
}

/**
 * Records this process as the file's `serve` (checking again in the same write transaction,
 * so of two starting together one is refused) and returns the function that removes the row.
 * A row whose process is gone (not running, or its pid now belongs to a younger process) is
 * stale and replaced: a `serve` killed with SIGKILL does not block the next start.
 */
export function acquireServeLock(sqlite: SqliteDatabase, file: string, id: string, now: Date): () => void {
  const path = _realpath(file)
  sqlite.transaction(() => {
    const other = _live(sqlite.prepare('SELECT * FROM serve_processes').all() as ServeRow[], path)
    if (other) throw _inUse(file, other)
    sqlite.prepare('DELETE FROM serve_processes').run()
    sqlite.prepare('INSERT INTO serve_processes (id, pid, host, file, proc_start, started_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(id, process.pid, hostname(), path, procStart(process.pid), now.toISOString())
  }).immediate()
  return () => {
    if (sqlite.open) sqlite.prepare('DELETE FROM serve_processes WHERE id = ?').run(id)
  }
}

/** A row of a process that still runs on this host with this very file (a copy or backup of the file carries the row along). */
function _live(rows: ServeRow[], path: string): ServeRow | undefined {
  return rows.find((r) => r.pid !== process.pid && r.host === hostname() && r.file === path && processRuns(r.pid, r.proc_start))
}

function _realpath(file: string): string {
  try {
    return realpathSync(file)
  } catch {
    return file
  }
}

function _inUse(file: string, other: ServeRow): DatabaseInUseError {
  return new DatabaseInUseError(`database ${file} is in use by another travelops serve (pid ${other.pid}, started ${other.started_at}); stop it first — one serve per SQLite file`)
}
