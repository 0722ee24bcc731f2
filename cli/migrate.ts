import { Command } from 'commander'
import { CliError, configFrom, dataCommand, print, table } from './util.ts'

export function migrateCommand(): Command {
  return dataCommand(new Command('migrate').description('apply pending database migrations (serve also does this at start)'))
    .option('--status', 'list migrations and whether they are applied, without applying')
    .action(async (opts) => {
      const config = await configFrom({ db: opts.db })
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
          print(opts, list, () => table(list.map((m) => ({ ...m, applied_at: m.applied_at ?? 'pending' })), ['name', 'applied_at']))
          return
        }
        const applied = migrate(db)
        print(opts, { applied }, () => (applied.length ? `applied ${applied.join(', ')}` : 'database is up to date'))
      } catch (err) {
        throw new CliError((err as Error).message)
      } finally {
        db.close()
      }
    })
}
