import { createHash } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import { classify, type DbState } from '../../db/inspect.ts'
import type { MigrateObserver, MigrationStatus } from '../../db/migration-files.ts'
import { loadMigrationFiles, type MigrationFile } from '../../db/migration-files.ts'
import type { Database } from '../../db/schema.ts'

// Migrations on PostgreSQL: the files of migrations/postgres/, each applied in one transaction
// with its schema_migrations row, all under one advisory lock, so that several `serve`
// processes starting together apply each migration once (the others wait for the lock, then
// find nothing left to do).

/** The advisory lock key of travelops' migrations (any constant shared by every process). */
const MIGRATION_LOCK = 0x7472_6176 // "trav"

const checksum = (text: string) => createHash('sha256').update(text).digest('hex')
type AnyDb = Kysely<Database>

export async function migratePostgres(db: AnyDb, files: MigrationFile[] = loadMigrationFiles('postgres'), observer: MigrateObserver = {}): Promise<string[]> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn)
    try {
      await sql.raw(`CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)`).execute(conn)
      const applied = new Map((await sql<{ name: string; checksum: string }>`select name, checksum from schema_migrations`.execute(conn)).rows.map((r) => [r.name, r.checksum]))
      for (const f of files) {
        const sum = applied.get(f.name)
        if (sum !== undefined && sum !== checksum(f.sql)) throw new Error(`migration ${f.name} was changed after it was applied (checksum mismatch)`)
      }
      const pending = files.filter((f) => !applied.has(f.name))
      const done: string[] = []
      for (const [index, f] of pending.entries()) {
        observer.start?.(f.name, index, pending.length)
        const started = performance.now()
        await conn.transaction().execute(async (tx) => {
          await sql.raw(f.sql).execute(tx) // several statements: the simple query protocol (no parameters)
          await sql`insert into schema_migrations (name, checksum, applied_at) values (${f.name}, ${checksum(f.sql)}, ${new Date().toISOString()})`.execute(tx)
        })
        done.push(f.name)
        observer.end?.(f.name, performance.now() - started)
      }
      return done
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn)
    }
  })
}

/** Every known migration with the time it was applied (null = pending); the database must be a travelops one. */
export async function migrationStatusPostgres(db: AnyDb, files: MigrationFile[] = loadMigrationFiles('postgres')): Promise<MigrationStatus[]> {
  // A database never migrated has no schema_migrations: every migration is pending (as on SQLite).
  const [table] = (await sql<{ t: string | null }>`select to_regclass('schema_migrations')::text as t`.execute(db)).rows
  const rows = table?.t ? (await sql<MigrationStatus>`select name, checksum, applied_at from schema_migrations`.execute(db)).rows : []
  const applied = new Map(rows.map((r) => [r.name, r]))
  return files.map((f) => ({ name: f.name, checksum: checksum(f.sql), applied_at: applied.get(f.name)?.applied_at ?? null }))
}

/** What the PostgreSQL database (its current schema) holds, read without writing anything. */
export async function inspectPostgres(db: AnyDb, files: MigrationFile[] = loadMigrationFiles('postgres')): Promise<DbState> {
  const tables = (await sql<{ name: string }>`select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`.execute(db)).rows.map((r) => r.name)
  if (tables.length === 0) return { kind: 'empty' }
  if (!tables.includes('schema_migrations')) return { kind: 'foreign', tables }
  const applied = (await sql<{ name: string }>`select name from schema_migrations order by name`.execute(db)).rows.map((r) => r.name)
  return classify(applied, files)
}
