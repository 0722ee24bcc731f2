// STAND-IN entry for the packaging branch only: the real commander CLI lands from main and
// replaces this file. It exercises what the executable needs (version, native SQLite addon,
// embedded migrations) so the packaging pipeline can be built and tested before the app.
import { Command } from 'commander'
import { isSea } from 'node:sea'
import { loadMigrationFiles } from '../src/db/migration-files.ts'
import { openSqlite } from '../src/db/sqlite.ts'
import { VERSION } from '../src/version.ts'

const program = new Command('travelops').version(VERSION)

program
  .command('selftest')
  .description('open the database, count the embedded migrations, print JSON')
  .requiredOption('--db <file>', 'SQLite database file')
  .option('--json', 'print JSON (always on)')
  .action((opts: { db: string }) => {
    const db = openSqlite(opts.db)
    try {
      const row = db.prepare('select sqlite_version() as version').get() as { version: string }
      const journal = db.pragma('journal_mode', { simple: true })
      const report = {
        version: VERSION,
        sea: isSea(),
        node: process.version,
        sqlite: row.version,
        journal_mode: journal,
        migrations: _countMigrations(),
      }
      process.stdout.write(`${JSON.stringify(report)}\n`)
    } finally {
      db.close()
    }
  })

function _countMigrations(): number | string {
  try {
    return loadMigrationFiles().length
  } catch (err) {
    return err instanceof Error ? err.message : String(err) // dev checkout without migrations/
  }
}

program.parse()
