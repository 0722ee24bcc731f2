import { createHash } from 'node:crypto'
import { loadMigrationFiles, type MigrateObserver, type MigrationFile, type MigrationStatus } from '../../db/migration-files.ts'
import type { SqliteDatabase } from './sqlite.ts'

const checksum = (sql: string) => createHash('sha256').update(sql).digest('hex')

function _ensureTable(db: SqliteDatabase): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)`)
}

/** Every known migration with the time it was applied (null = pending). */
export function migrationStatus(db: SqliteDatabase, files = loadMigrationFiles()): MigrationStatus[] {
  _ensureTable(db)
  const applied = new Map(
    (db.prepare('SELECT name, checksum, applied_at FROM schema_migrations').all() as MigrationStatus[])
      .map((r) => [r.name, r]),
  )
  return files.map((f) => ({ name: f.name, checksum: checksum(f.sql), applied_at: applied.get(f.name)?.applied_at ?? null }))
}

/**
 * Applies pending migrations in name order, each in one IMMEDIATE transaction together
 * with its schema_migrations row. Refuses to run when an applied file was edited since.
 */
export function migrate(db: SqliteDatabase, files: MigrationFile[] = loadMigrationFiles(), observer: MigrateObserver = {}): string[] {
  _ensureTable(db)
  const applied = new Map(
    (db.prepare('SELECT name, checksum FROM schema_migrations').all() as { name: string; checksum: string }[])
      .map((r) => [r.name, r.checksum]),
  )
  for (const f of files) {
    const sum = applied.get(f.name)
    if (sum !== undefined && sum !== checksum(f.sql)) {
      throw new Error(`migration ${f.name} was changed after it was applied (checksum mismatch)`)
    }
  }
  const done: string[] = []
  const pending = files.filter((f) => !applied.has(f.name))
  for (const [index, f] of pending.entries()) {
    observer.start?.(f.name, index, pending.length)
    const started = performance.now()
    const apply = db.transaction(() => {
      // Another process may have applied it between our read and this write lock.
      if (db.prepare('SELECT 1 FROM schema_migrations WHERE name = ?').get(f.name)) return false
      db.exec(f.sql)
      db.prepare('INSERT INTO schema_migrations (name, checksum, applied_at) VALUES (?, ?, ?)')
        .run(f.name, checksum(f.sql), new Date().toISOString())
      return true
    })
    if (apply.immediate()) done.push(f.name)
    observer.end?.(f.name, performance.now() - started)
  }
  return done
}
