import { Command, CommanderError } from 'commander'
import { VERSION } from '../src/version.ts'
import { backupCommand } from './backup.ts'
import { completionCommand } from './completion.ts'
import { dashboardCommand } from './dashboard.ts'
import { dbCommand } from './db.ts'
import { deliveriesCommand } from './deliveries.ts'
import { keysCommand } from './keys.ts'
import { listenCommand } from './listen.ts'
import { migrateCommand } from './migrate.ts'
import { serveCommand } from './serve.ts'
import { tenantsCommand } from './tenants.ts'
import { CliError } from './util.ts'
import { verifyCommand } from './verify.ts'

// Every command file imports only commander and ./util.ts at the top and loads what its actions
// need (valibot, kysely, SQLite, h3, …) with import() when they run: `--version` and `--help`
// evaluate none of it. In the executable, esbuild turns those import() calls into lazily run
// module initialisers of the one bundle.

export function createProgram(): Command {
  const program = new Command('travelops')
    .description('Self-hosted multi-tenant REST API for travel operators, with signed, retried webhooks.')
    .version(VERSION, '-v, --version')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', [
      '',
      'Every command but serve takes --json (one JSON document on stdout). Exit codes: 0 done,',
      '1 the operation failed, 2 usage error. Ids in arguments may be cut to a unique prefix.',
      '',
      'Examples:',
      '  $ travelops serve --port 8080',
      '  $ travelops tenants create --name "Nordic Trails"',
      '  $ travelops keys create --tenant ten_019ab3c4 --name website',
      '  $ travelops deliveries list --status failed',
    ].join('\n'))
  program.addCommand(serveCommand())
  program.addCommand(migrateCommand())
  program.addCommand(tenantsCommand())
  program.addCommand(keysCommand())
  program.addCommand(deliveriesCommand())
  program.addCommand(listenCommand())
  program.addCommand(verifyCommand())
  program.addCommand(backupCommand())
  program.addCommand(dbCommand())
  program.addCommand(dashboardCommand())
  program.addCommand(completionCommand())
  // Usage errors exit 2 (commander's default is 1); help and version exit 0.
  const exitOverride = (cmd: Command) => {
    cmd.exitOverride((err: CommanderError) => {
      throw err
    })
    cmd.commands.forEach(exitOverride)
  }
  exitOverride(program)
  return program
}

/** Runs the CLI; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const program = createProgram()
  try {
    await program.parseAsync(argv)
    return 0
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0
      // 'commander.help' is also help shown for a missing or unknown command (on stderr, exitCode 1): a usage error.
      if (err.code === 'commander.help') return err.exitCode === 0 ? 0 : 2
      return 2
    }
    if (err instanceof CliError) {
      if (err.message) process.stderr.write(`error: ${err.message}\n`)
      return err.exitCode
    }
    process.stderr.write(`error: ${(err as Error)?.message ?? String(err)}\n`)
    return 1
  }
}
