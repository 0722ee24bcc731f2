import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { migrate } from '../../src/engine/sqlite/migrate.ts'
import { openSqlite } from '../../src/engine/sqlite/sqlite.ts'
import { cliBundle, cliBundleEnv } from './cli-bundle.ts'
import { newPgDatabase, testEngine } from './engine.ts'

/** The checkout's entry (tsx); runCli(), startServe() and runInPty() spawn the bundled CLI instead (cli-bundle.ts). */
export const BIN = fileURLToPath(new URL('../../cli/bin.cjs', import.meta.url))

/** The command line and environment that run the CLI: the test bundle (cli-bundle.ts) under the Node running the tests. */
export async function cliCommand(args: string[], env: Record<string, string> = {}): Promise<{ argv: string[]; env: NodeJS.ProcessEnv }> {
  const bundle = await cliBundle()
  return { argv: [process.execPath, bundle, ...args], env: { ...process.env, ...cliBundleEnv(bundle), ...env } }
}

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * A new, migrated database for a test (in-process, as `travelops migrate` would make it): the
 * SQLite file `file`, or with TRAVELOPS_TEST_ENGINE=postgres a new PostgreSQL database (its URL
 * is returned). Only serve and migrate create a database; every other command needs one.
 */
export async function migratedDb(file: string): Promise<string> {
  if (testEngine() === 'postgres') {
    const url = await newPgDatabase()
    const { openDatabase } = await import('../../src/engine/open.ts')
    await (await openDatabase(url, { create: true, migrate: true })).close()
    return url
  }
  const db = openSqlite(file)
  try {
    migrate(db)
  } finally {
    db.close()
  }
  return file
}

/** Runs the real CLI as a process (the Node running the tests, ≥ 22). */
export async function runCli(args: string[], opts: { env?: Record<string, string>; input?: string | Uint8Array } = {}): Promise<CliResult> {
  const cmd = await cliCommand(args, opts.env)
  return new Promise((resolve, reject) => {
    const child = spawn(cmd.argv[0]!, cmd.argv.slice(1), { env: cmd.env, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(opts.input ?? '')
  })
}

export async function runJson(args: string[], opts: { env?: Record<string, string> } = {}): Promise<any> {
  const r = await runCli([...args, '--json'], opts)
  if (r.code !== 0) throw new Error(`travelops ${args.join(' ')} exited ${r.code}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

export interface ServeProcess {
  url: string
  child: ChildProcess
  stderr(): string
  /** SIGTERM and wait for exit; resolves to the exit code. */
  stop(): Promise<number | null>
  /** SIGKILL and wait. */
  kill(): Promise<void>
}

/** Starts `travelops serve --port 0 …` and waits for its "listening on http://…" line. */
export async function startServe(args: string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  const cmd = await cliCommand(['serve', '--port', '0', ...args], env)
  return new Promise((resolve, reject) => {
    const child = spawn(cmd.argv[0]!, cmd.argv.slice(1), { env: cmd.env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`serve did not start: ${err}`))
    }, 20_000)
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
    child.stderr!.on('data', (d) => (err += d))
    child.stdout!.on('data', (d) => {
      out += d
      const m = /(https?:\/\/[^\s]+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve({
          url: m[1]!,
          child,
          stderr: () => err,
          stop: () => (child.kill('SIGTERM'), exited),
          kill: async () => {
            child.kill('SIGKILL')
            await exited
          },
        })
      }
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`serve exited with ${code}: ${err}`))
    })
  })
}

/** JSON requests to a spawned `serve` with one API key: resolves to the status and the parsed body. */
export function apiClient(url: string, key: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : undefined }
  }
}

/** Polls `fn` until it returns something truthy and resolves with it; rejects after `timeoutMs`, naming `what`. */
export async function until<T>(what: string, fn: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await fn()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
