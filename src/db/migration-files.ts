import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface MigrationFile {
  name: string
  sql: string
}

export type Engine = 'sqlite' | 'postgres'

declare const __TRAVELOPS_MIGRATIONS__: MigrationFile[] | undefined
declare const __TRAVELOPS_PG_MIGRATIONS__: MigrationFile[] | undefined

/**
 * The SQL files of `migrations/` (SQLite) or `migrations/postgres/` (their PostgreSQL twins,
 * with the same names), in name order. A packaged executable has no folder to read: the build
 * (scripts/package.ts) replaces `__TRAVELOPS_MIGRATIONS__` and `__TRAVELOPS_PG_MIGRATIONS__`
 * with the files' contents, so there the function returns before it would touch
 * `import.meta` or the disk.
 */
export function loadMigrationFiles(engine: Engine = 'sqlite'): MigrationFile[] {
  if (engine === 'sqlite' && typeof __TRAVELOPS_MIGRATIONS__ !== 'undefined') return __TRAVELOPS_MIGRATIONS__
  if (engine === 'postgres' && typeof __TRAVELOPS_PG_MIGRATIONS__ !== 'undefined') return __TRAVELOPS_PG_MIGRATIONS__
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations')
  return readMigrationDir(engine === 'sqlite' ? root : join(root, 'postgres'))
}

/** Reads a migrations folder; also used by the build to embed the files. */
export function readMigrationDir(dir: string): MigrationFile[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8') }))
}
