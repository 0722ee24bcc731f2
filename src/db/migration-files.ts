import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface MigrationFile {
  name: string
  sql: string
}

/** Which set of migration files: SQLite's (`migrations/`) or PostgreSQL's twins (`migrations/postgres/`). */
export type MigrationSet = 'sqlite' | 'postgres'

declare const __TRAVELOPS_MIGRATIONS__: MigrationFile[] | undefined
declare const __TRAVELOPS_PG_MIGRATIONS__: MigrationFile[] | undefined

/** Each set's files as the build embeds them (undefined in a checkout) and its folder under `migrations/`. */
const _SETS: Record<MigrationSet, { embedded: () => MigrationFile[] | undefined; folder: string[] }> = {
  sqlite: { embedded: () => (typeof __TRAVELOPS_MIGRATIONS__ !== 'undefined' ? __TRAVELOPS_MIGRATIONS__ : undefined), folder: [] },
  postgres: { embedded: () => (typeof __TRAVELOPS_PG_MIGRATIONS__ !== 'undefined' ? __TRAVELOPS_PG_MIGRATIONS__ : undefined), folder: ['postgres'] },
}

/**
 * The SQL files of `migrations/` (SQLite) or `migrations/postgres/` (their PostgreSQL twins,
 * with the same names), in name order. A packaged executable has no folder to read: the build
 * (scripts/package.ts) replaces `__TRAVELOPS_MIGRATIONS__` and `__TRAVELOPS_PG_MIGRATIONS__`
 * with the files' contents, so there the function returns before it would touch
 * `import.meta` or the disk.
 */
export function loadMigrationFiles(set: MigrationSet = 'sqlite'): MigrationFile[] {
  const s = _SETS[set]
  const embedded = s.embedded()
  if (embedded) return embedded
  return readMigrationDir(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations', ...s.folder))
}

/** Reads a migrations folder; also used by the build to embed the files. */
export function readMigrationDir(dir: string): MigrationFile[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8') }))
}

/** A migration and when it was applied (null: pending): Engine.migrationStatus() on either engine. */
export interface MigrationStatus {
  name: string
  checksum: string
  applied_at: string | null
}

/** Told of each migration Engine.migrate() applies. */
export interface MigrateObserver {
  /** Called before each pending migration is applied, and after it with the milliseconds it took. */
  start?(name: string, index: number, count: number): void
  end?(name: string, ms: number): void
}
