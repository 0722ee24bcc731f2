import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const BIN = fileURLToPath(new URL('../../cli/bin.cjs', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs the real CLI as a process (the Node running the tests, ≥ 22). */
export function runCli(args: string[], opts: { env?: Record<string, string>; input?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] })
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
export function startServe(args: string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
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
      const m = /(http:\/\/[^\s]+)/.exec(out)
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
