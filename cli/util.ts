import { Option, type Command } from 'commander'
import type { Config } from '../src/config.ts'
import type { OpenDb } from '../src/db/connect.ts'

// Only commander and types are imported here at the top: `--version` and `--help` load this
// file, and everything heavier (valibot, kysely, SQLite, h3) is imported when an action runs.

/** A failure the user should read; exit code 1 (operation failed) unless told otherwise. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message)
  }
}

/** Ends a command whose answer is already printed (e.g. `invalid`) with this exit code, saying nothing more. */
export const quietExit = (exitCode: number) => new CliError('', exitCode)

export const dbOption = () => new Option('--db <path>', 'SQLite database file').env('TRAVELOPS_DB')
export const jsonOption = () => new Option('--json', 'print exactly one JSON document on stdout')

/** Adds `--db` and `--json` to a data command. */
export function dataCommand(cmd: Command): Command {
  return cmd.addOption(dbOption()).addOption(jsonOption())
}

export async function configFrom(opts: Record<string, unknown>): Promise<Config> {
  const { resolveConfig } = await import('../src/config.ts')
  try {
    return resolveConfig(opts)
  } catch (err) {
    throw new CliError((err as Error).message, 2)
  }
}

/** Opens the database named by `--db`/TRAVELOPS_DB (applying pending migrations), runs `fn`, closes it. */
export async function withDb<T>(opts: Record<string, unknown>, fn: (db: OpenDb) => Promise<T>): Promise<T> {
  const config = await configFrom({ db: opts.db })
  const { openDb } = await import('../src/db/connect.ts')
  let opened: OpenDb
  try {
    opened = openDb(config.db)
  } catch (err) {
    throw new CliError(`cannot open database ${config.db}: ${(err as Error).message}`)
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

/** Aligned columns for human listings. */
export function table(rows: readonly object[], columns: string[]): string {
  if (rows.length === 0) return '(none)'
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(',') : String(v))
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell((r as Record<string, unknown>)[c]).length)))
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd()
  return [line(columns), ...rows.map((r) => line(columns.map((c) => cell((r as Record<string, unknown>)[c]))))].join('\n')
}
