import { Command } from 'commander'
import { renderTable, styleFor, timeCell } from './format.ts'
import { CliError, print, tableCommand, withDb } from './util.ts'

export function migrateCommand(): Command {
  return tableCommand(new Command('migrate').description('apply pending database migrations (serve also does this at start)'))
    .option('--status', 'list migrations and whether they are applied, without applying')
    .addHelpText('after', '\nExamples:\n  $ travelops migrate --db /var/lib/travelops/travelops.db\n  $ travelops migrate --status --json')
    .action((opts) => withDb(opts, async (opened) => {
      try {
        if (opts.status) {
          const list = await opened.engine.migrationStatus()
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
        const observer = {
          start: (name: string, i: number, n: number) => bar.line(`applying ${name} (${i + 1} of ${n})…`),
          end: (name: string, ms: number) => bar.line(`applied ${name} in ${(ms / 1000).toFixed(1)} s`),
        }
        const applied = await opened.engine.migrate(observer)
        print(opts, { applied }, () => (applied.length ? `applied ${applied.join(', ')}` : 'database is up to date'))
      } catch (err) {
        throw new CliError((err as Error).message)
      }
    }, opts.status ? { allowPending: true } : { create: true }))
}
