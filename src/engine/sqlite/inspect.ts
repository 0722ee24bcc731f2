import { existsSync } from 'node:fs'
import { classify, DatabaseRefused, type DbState } from '../../db/inspect.ts'
import { loadMigrationFiles, type MigrationFile } from '../../db/migration-files.ts'
import { openSqliteToInspect } from './sqlite.ts'

/** What the SQLite file holds, read without writing anything. */
export function inspectSqlite(file: string, files: MigrationFile[] = loadMigrationFiles()): DbState {
  if (file !== ':memory:' && !existsSync(file)) return { kind: 'missing' }
  let db
  try {
    db = openSqliteToInspect(file)
  } catch (err) {
    throw new DatabaseRefused(`${file} is not a SQLite database (${(err as Error).message})`)
  }
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map((r) => r.name)
    if (tables.length === 0) return { kind: 'empty' }
    if (!tables.includes('schema_migrations')) return { kind: 'foreign', tables }
    const applied = (db.prepare('SELECT name FROM schema_migrations ORDER BY name').all() as { name: string }[]).map((r) => r.name)
    return classify(applied, files)
  } finally {
    db.close()
  }
}
