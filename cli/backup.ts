import { Command } from 'commander'
import { assertDatabase, CliError, configFrom, dataCommand, print } from './util.ts'

export function backupCommand(): Command {
  return dataCommand(new Command('backup').description('write a consistent copy of the database, safe while serve runs'))
    .argument('<dest-file>', 'file to write the copy to (refused if it exists, unless --force)')
    .option('--force', 'replace <dest-file> if it exists')
    .option('--mkdir', 'create the directory of <dest-file> (and its parents, mode 0700) if it does not exist')
    .addHelpText('after', '\nExamples:\n  $ travelops backup backups/$(date +%F).db --mkdir --db travelops.db\n  $ travelops backup /var/backups/travelops/nightly.db --force --json')
    .action(async (dest: string, opts) => {
      const config = await configFrom({ db: opts.db })
      const [{ dirname, resolve }, { existsSync, mkdirSync }, { backupTo }] = await Promise.all([import('node:path'), import('node:fs'), import('../src/engine/open.ts')])
      const refused = (await import('../src/engine/open.ts')).backupRefusal(config.db)
      if (refused) throw new CliError(refused, 2)
      await assertDatabase(config.db, { create: false, allowPending: true })
      const target = resolve(dest)
      if (target === resolve(config.db)) throw new CliError('<dest-file> is the database itself', 2)
      const dir = dirname(target)
      if (!existsSync(dir)) {
        if (!opts.mkdir) throw new CliError(`backup failed: the directory ${dir} does not exist; pass --mkdir to create it, or run: mkdir -p ${_shellQuote(dir)}`)
        try {
          mkdirSync(dir, { recursive: true, mode: 0o700 })
        } catch (err) {
          throw new CliError(`backup failed: cannot create ${dir}: ${(err as Error).message}`)
        }
      }
      const { progress, bytes } = await import('./progress.ts')
      const bar = progress('backing up', bytes)
      let result
      try {
        result = await backupTo(config.db, target, { overwrite: opts.force === true, onProgress: bar.update })
      } catch (err) {
        throw new CliError(`backup failed: ${(err as Error).message}`)
      } finally {
        bar.end()
      }
      const report = { backup: target, bytes: result.bytes, pages: result.pages }
      print(opts, report, () => `backed up ${config.db} to ${target} (${result.bytes} bytes, ${result.pages} pages)`)
    })
}

/** `dir` as a shell word the user can paste (quoted only when it needs to be). */
function _shellQuote(dir: string): string {
  return /^[\w@%+=:,./-]+$/.test(dir) ? dir : `'${dir.replaceAll("'", `'\\''`)}'`
}
