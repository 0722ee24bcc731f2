import { Command } from 'commander'
import { renderTable, styleFor, timeCell } from './format.ts'
import { assertDatabase, CliError, configFrom, print, tableCommand } from './util.ts'

export function migrateCommand(): Command {
  return tableCommand(new Command('migrate').description('apply pending database migrations (serve also does this at start)'))
    .option('--status', 'list migrations and whether they are applied, without applying')
    .addHelpText('after', '\nExamples:\n  $ travelops migrate --db /var/lib/travelops/travelops.db\n  $ travelops migrate --status --json')
    .action(async (opts) => {
      const config = await configFrom({ db: opts.db })
      await assertDatabase(config.db, opts.status ? { create: false, allowPending: true } : { create: true })
      const [{ migrate, migrationStatus }, { openSqlite }] = await Promise.all([import('../src/db/migrate.ts'), import('../src/db/sqlite.ts')])
      let db
      try {
        db = openSqlite(config.db)
      } catch (err) {
        throw new CliError(`cannot open database ${config.db}: ${(err as Error).message}`)
      }
      try {
        if (opts.status) {
          const list = migrationStatus(db)
          const time = timeCell(opts.wide, new Date())
          print(opts, list, () => renderTable(list, [
            { header: 'MIGRATION', value: (m) => m.name },
            { header: 'STATUS', value: (m) => (m.applied_at ? 'applied' : 'pending'), colour: (m) => (m.applied_at ? 'green' : 'yellow') },
            { header: 'APPLIED', value: (m) => time(m.applied_at) },
          ], styleFor(opts)))
          return
        }
        const { progress } = await import('./progress.ts')
        const bar = progress('migrating')
        const applied = migrate(db, undefined, {
          start: (name, i, n) => bar.line(`applying ${name} (${i + 1} of ${n})…`),
          end: (name, ms) => bar.line(`applied ${name} in ${(ms / 1000).toFixed(1)} s`),
        })
        print(opts, { applied }, () => (applied.length ? `applied ${applied.join(', ')}` : 'database is up to date'))
      } catch (err) {
        throw new CliError((err as Error).message)
      } finally {
        db.close()
      }
    })
}
