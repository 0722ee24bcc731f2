import { Command } from 'commander'
import { CliError, configFrom, dataCommand, print } from './util.ts'

export function backupCommand(): Command {
  return dataCommand(new Command('backup').description('write a consistent copy of the database, safe while serve runs'))
    .argument('<dest-file>', 'file to write the copy to (refused if it exists, unless --force)')
    .option('--force', 'replace <dest-file> if it exists')
    .action(async (dest: string, opts) => {
      const config = await configFrom({ db: opts.db })
      const [{ resolve }, { backupTo }] = await Promise.all([import('node:path'), import('../src/db/backup.ts')])
      const target = resolve(dest)
      if (target === resolve(config.db)) throw new CliError('<dest-file> is the database itself', 2)
      let result
      try {
        result = await backupTo(config.db, target, { overwrite: opts.force === true })
      } catch (err) {
        throw new CliError(`backup failed: ${(err as Error).message}`)
      }
      const report = { backup: target, bytes: result.bytes, pages: result.pages }
      print(opts, report, () => `backed up ${config.db} to ${target} (${result.bytes} bytes, ${result.pages} pages)`)
    })
}
