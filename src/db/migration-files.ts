import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface MigrationFile {
  name: string
  sql: string
}

declare const __TRAVELOPS_MIGRATIONS__: MigrationFile[] | undefined

/**
 * The SQL files of `migrations/`, in name order. A packaged executable has no folder to
 * read: the build replaces `__TRAVELOPS_MIGRATIONS__` with the files' contents.
 */
export function loadMigrationFiles(): MigrationFile[] {
  if (typeof __TRAVELOPS_MIGRATIONS__ !== 'undefined') return __TRAVELOPS_MIGRATIONS__
  const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations')
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name), 'utf8') }))
}
