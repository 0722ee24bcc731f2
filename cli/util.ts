import { Option, type Command } from 'commander'
import type { Config } from '../src/config.ts'
import type { OpenOptions } from '../src/db/connect.ts'
import type { OpenDb } from '../src/engine/port.ts'

// Only commander and types are imported here at the top: `--version` and `--help` load this
// file, and everything heavier (valibot, kysely, SQLite, h3) is imported when an action runs.

/** A failure the user should read; exit code 1 (operation failed) unless told otherwise. */
export class CliError extends Error {
  readonly exitCode: number

  constructor(message: string, exitCode = 1) {
    super(message)
    this.exitCode = exitCode
  }
}

/** Ends a command whose answer is already printed (e.g. `invalid`) with this exit code, saying nothing more. */
export const quietExit = (exitCode: number) => new CliError('', exitCode)

export const dbOption = () => new Option('--db <url-or-path>', 'SQLite database file or postgres:// URL (default: ./travelops.db)').env('TRAVELOPS_DB')
export const jsonOption = () => new Option('--json', 'print exactly one JSON document on stdout')

/** Adds `--db` and `--json` to a data command. */
export function dataCommand(cmd: Command): Command {
  return cmd.addOption(dbOption()).addOption(jsonOption())
}

/** A data command that prints tables: also `--wide` (full ids, exact times, every column) and `--no-color`. */
export function tableCommand(cmd: Command): Command {
  return dataCommand(cmd)
    .addOption(new Option('--wide', 'full ids, exact times and every column, never cut to the terminal\'s width'))
    .addOption(new Option('--no-color', 'no colour even on a terminal (also: NO_COLOR=1)'))
}

export async function configFrom(opts: Record<string, unknown>): Promise<Config> {
  const { resolveConfig } = await import('../src/config.ts')
  try {
    return resolveConfig(opts)
  } catch (err) {
    throw new CliError((err as Error).message, 2)
  }
}

/**
 * Checks what the SQLite file `where` holds, without writing (CONTRACT §10, opening safely):
 * a refusal is exit 1 with the reason. `create` only for serve and migrate. (openDatabase()
 * makes the same checks for both engines.)
 */
export async function assertDatabase(where: string, opts: { create: boolean; allowPending?: boolean }): Promise<void> {
  const [{ DatabaseRefused }, { assertUsableBeforeOpen }] = await Promise.all([import('../src/db/inspect.ts'), import('../src/engine/open.ts')])
  try {
    await assertUsableBeforeOpen(where, opts)
  } catch (err) {
    if (err instanceof DatabaseRefused) throw new CliError(err.message)
    throw err
  }
}

/**
 * Opens the travelops database named by `--db`/TRAVELOPS_DB, a SQLite file or a PostgreSQL URL,
 * after checking it (a refusal is exit 1), runs `fn`, closes it. Only `migrate` passes `create`.
 */
export async function withDb<T>(opts: Record<string, unknown>, fn: (db: OpenDb) => Promise<T>, open: OpenOptions = {}): Promise<T> {
  const config = await configFrom({ db: opts.db })
  const [{ openDatabase, shownTarget }, { DatabaseRefused }] = await Promise.all([
    import('../src/engine/open.ts'), import('../src/db/inspect.ts'),
  ])
  let opened: OpenDb
  try {
    opened = await openDatabase(config.db, open)
  } catch (err) {
    if (err instanceof DatabaseRefused) throw new CliError(err.message)
    throw new CliError(`cannot open database ${shownTarget(config.db)}: ${(err as Error).message}`)
  }
  try {
    return await fn(opened)
  } finally {
    await opened.close()
  }
}

/** `--json` → one JSON document; otherwise the human text. */
export function print(opts: { json?: boolean }, value: unknown, human: () => string): void {
  process.stdout.write(opts.json ? JSON.stringify(value, null, 2) + '\n' : human() + '\n')
}

