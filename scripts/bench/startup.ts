// The start-up figure: from spawning `travelops serve` to its first authenticated 200 (a key's
// GET /v1/orders?limit=1), polled every 2 ms. The executable is dist/travelops, built first
// when it is missing or older than the sources; `--quick` runs (the test suite) take the
// executable only when it is fresh and otherwise the checkout's launcher (node + tsx), and say so.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { request } from 'undici'
import { NODE_FLAGS } from '../../src/node-flags.ts'
import { percentile } from './report.ts'

export interface StartupBinary {
  /** argv[0] and the arguments before `serve` */
  cmd: string[]
  what: string
}

const SOURCES = ['src', 'cli', 'migrations', 'dashboard', 'package.json', 'package-lock.json', 'scripts/package.ts']

function _newest(path: string): number {
  const st = statSync(path)
  if (!st.isDirectory()) return st.mtimeMs
  return Math.max(st.mtimeMs, ...readdirSync(path).map((f) => _newest(join(path, f))))
}

/** dist/travelops (built when missing or stale unless `quick`), or the launcher in a quick run. */
export function startupBinary(root: string, quick: boolean, log: (msg: string) => void): StartupBinary {
  const exe = join(root, 'dist', 'travelops')
  const fresh = () => existsSync(exe) && statSync(exe).mtimeMs >= Math.max(...SOURCES.filter((s) => existsSync(join(root, s))).map((s) => _newest(join(root, s))))
  if (!fresh() && !quick) {
    log('dist/travelops is missing or older than the sources: building it (npm run package)')
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'package.ts')], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
    if (r.status !== 0) throw new Error('npm run package failed')
  }
  if (fresh()) return { cmd: [exe], what: 'dist/travelops' }
  return { cmd: [process.execPath, ...NODE_FLAGS, join(root, 'cli', 'bin.cjs')], what: 'the checkout (node cli/bin.cjs; dist/travelops not fresh)' }
}

async function _freePort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()))
  const port = (srv.address() as AddressInfo).port
  await new Promise<void>((r) => srv.close(() => r()))
  return port
}

/** Median (and each run) of `runs` starts of `serve --db db` to the first 200 with `key`. */
export async function measureStartup(bin: StartupBinary, db: string, key: string, runs: number): Promise<{ medianMs: number; runsMs: number[] }> {
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const port = await _freePort()
    const t0 = performance.now()
    const proc = spawn(bin.cmd[0]!, [...bin.cmd.slice(1), 'serve', '--db', db, '--port', String(port), '--host', '127.0.0.1', '--log-level', 'warn'], {
      stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_ENV: 'production' },
    })
    let stderr = ''
    proc.stderr!.on('data', (d: Buffer) => { stderr += d.toString() })
    const exited = new Promise<void>((r) => proc.once('exit', () => r()))
    try {
      for (;;) {
        if (proc.exitCode !== null) throw new Error(`serve exited during start-up: ${stderr.slice(0, 500)}`)
        if (performance.now() - t0 > 20_000) throw new Error('serve did not answer within 20 s')
        const ok = await request(`http://127.0.0.1:${port}/v1/orders?limit=1`, { headers: { authorization: `Bearer ${key}` } })
          .then(async (res) => { await res.body.text(); return res.statusCode === 200 }, () => false)
        if (ok) break
        await sleep(2)
      }
      times.push(performance.now() - t0)
    } finally {
      proc.kill('SIGTERM')
      await exited
    }
  }
  return { medianMs: percentile([...times].sort((a, b) => a - b), 50), runsMs: times }
}
