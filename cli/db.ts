import { Command } from 'commander'
import { renderTable, styleFor } from './format.ts'
import { CliError, configFrom, jsonOption, print } from './util.ts'

export function dbCommand(): Command {
  const cmd = new Command('db').description('move a travelops database between SQLite and PostgreSQL')
    .addHelpText('after', '\nExamples:\n  $ travelops db copy --from travelops.db --to postgres://travelops@db.internal/travelops')
  cmd.command('copy').description('copy every row of one travelops database into another, empty one (SQLite file or postgres:// URL, either way)')
    .requiredOption('--from <db>', 'the database to copy: a SQLite file or a postgres:// URL (read in one snapshot; serve may keep running on it)')
    .requiredOption('--to <db>', 'the empty target: a SQLite file (created if missing) or a postgres:// URL (migrated if needed)')
    .addOption(jsonOption())
    .addHelpText('after', [
      '',
      'Examples:',
      '  $ travelops db copy --from travelops.db --to postgres://travelops:secret@127.0.0.1/travelops',
      '  $ travelops db copy --from "$DATABASE_URL" --to travelops.db --json',
      '',
      'The target must hold no rows (a non-empty target is exit 1, nothing written). Every table\'s',
      'rows are counted on both sides at the end; a difference is exit 1.',
      '',
      'Dashboard links and sessions stay behind: sign-ins belong to the server that issued them, so',
      'after the copy everyone signs in to the dashboard again (travelops dashboard link). API keys,',
      'tenants, records, subscriptions and deliveries are all copied.',
    ].join('\n'))
    .action(async (opts) => {
      const from = (await configFrom({ db: opts.from })).db
      const to = (await configFrom({ db: opts.to })).db
      if (from === to) throw new CliError('--from and --to name the same database', 2)
      const [{ openDatabase, shownTarget: shown }, { DatabaseRefused }, copy, { progress }] = await Promise.all([
        import('../src/engine/open.ts'), import('../src/db/inspect.ts'), import('../src/engine/copy.ts'), import('./progress.ts'),
      ])
      const open = async (db: string, o: { create?: boolean; migrate?: boolean; allowPending?: boolean }) => {
        try {
          return await openDatabase(db, o)
        } catch (err) {
          if (err instanceof DatabaseRefused) throw new CliError(err.message)
          throw new CliError(`cannot open database ${shown(db)}: ${(err as Error).message}`)
        }
      }
      const source = await open(from, {})
      try {
        // A value the target could not store stops the copy before the target is opened (CONTRACT §16).
        const unstorable = await copy.findUnstorable(source)
        if (unstorable) throw new CliError(`cannot copy ${shown(from)}: ${unstorable.message}`)
        // The target is looked at before anything is written to it: refused if it holds rows.
        const target = await open(to, { create: true, allowPending: true })
        try {
          const busy = await copy.firstNonEmpty(target.db).catch(() => undefined)
          if (busy) throw new CliError(`${shown(to)} is not empty (table ${busy} has rows); copy only into an empty database; nothing was written`)
        } finally {
          await target.close()
        }
        const dest = await open(to, { create: true, migrate: true })
        try {
          let bar = progress('copying')
          const counts = await copy.copyRows(source, dest, {
            table: (name) => {
              bar.end()
              bar = progress(`copying ${name}`)
            },
            rows: (_name, done, total) => bar.update(done, total),
          }).catch((err: unknown) => {
            bar.end()
            throw err instanceof copy.UnstorableRow ? new CliError(`cannot copy ${shown(from)}: ${err.message}`) : err
          })
          bar.end()
          const after = await copy.countRows(dest.db)
          const wrong = Object.keys(counts).filter((t) => counts[t] !== after[t])
          if (wrong.length) throw new CliError(`row counts differ after the copy: ${wrong.map((t) => `${t} ${counts[t]} → ${after[t]}`).join(', ')}`)
          const rows = Object.values(counts).reduce((a, b) => a + b, 0)
          print(opts, { from: shown(from), to: shown(to), rows, tables: counts }, () =>
            `${renderTable(Object.entries(counts).map(([table, n]) => ({ table, n })), [
              { header: 'TABLE', value: (r) => r.table },
              { header: 'ROWS', value: (r) => String(r.n), right: true },
            ], styleFor({}))}\ncopied ${rows} rows from ${shown(from)} to ${shown(to)}; every table's count checked`)
        } finally {
          await dest.close()
        }
      } finally {
        await source.close()
      }
    })
  return cmd
}
