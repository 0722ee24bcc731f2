import { loadMigrationFiles, type MigrationFile } from './migration-files.ts'

// Opening safely (CONTRACT §10): before anything is written, look at what `--db` names. Only
// `serve` and `migrate` create a database; nothing is ever written into another application's
// database or into one that a newer travelops has migrated.

export type DbState =
  | { kind: 'missing' }
  /** A file (or database) with no tables at all: a new travelops database once migrated. */
  | { kind: 'empty' }
  | { kind: 'foreign'; tables: string[] }
  | { kind: 'travelops'; applied: string[]; pending: string[]; unknown: string[] }

/** Applied migration names against this build's files (shared by both engines). */
export function classify(applied: string[], files: MigrationFile[]): DbState {
  const known = new Set(files.map((f) => f.name))
  const done = new Set(applied)
  return { kind: 'travelops', applied, pending: files.filter((f) => !done.has(f.name)).map((f) => f.name), unknown: applied.filter((n) => !known.has(n)) }
}

/** A database this command must not open; the message says why and what to do. Exit 1. */
export class DatabaseRefused extends Error {}

/**
 * Throws DatabaseRefused unless the command may go on. `create` (serve, migrate): a missing or
 * empty database is created and migrated. Other commands need a travelops database that is
 * fully migrated (`allowPending`: or one with migrations still to apply, for `migrate --status`
 * and `backup`). A foreign or newer database is refused by every command.
 */
export function assertUsable(state: DbState, where: string, opts: { create: boolean; allowPending?: boolean }, files: MigrationFile[] = loadMigrationFiles()): void {
  const latest = files.at(-1)?.name ?? '(none)'
  switch (state.kind) {
    case 'missing':
      if (!opts.create) throw new DatabaseRefused(`no database at ${where}; create it with: travelops migrate --db ${where}`)
      return
    case 'empty':
      if (!opts.create) throw new DatabaseRefused(`${where} holds no travelops schema yet; create it with: travelops migrate --db ${where}`)
      return
    case 'foreign':
      throw new DatabaseRefused(`${where} is not a travelops database: it holds other tables (${_list(state.tables)}) and no schema_migrations; nothing was written`)
    case 'travelops':
      if (state.unknown.length) {
        throw new DatabaseRefused(`${where} was migrated by a newer travelops: it has ${_list(state.unknown)} applied, and this build knows migrations up to ${latest}; upgrade travelops (nothing was written)`)
      }
      if (!opts.create && !opts.allowPending && state.pending.length) {
        throw new DatabaseRefused(`${where} needs ${state.pending.length} migration${state.pending.length === 1 ? '' : 's'} (${_list(state.pending)}); run: travelops migrate --db ${where}`)
      }
  }
}

const _list = (names: string[]) => (names.length > 5 ? `${names.slice(0, 5).join(', ')}, … ${names.length - 5} more` : names.join(', '))
