import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { findPgBinDir, pgCommand } from './pg-server.ts'

// `npm test`'s runner (scripts/test.ts) run by a test: it starts a PostgreSQL server of its own
// when none is given, and must stop it however the run ends.

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

export interface RunnerRun {
  proc: ChildProcess
  /** Its TMPDIR, of its own: where its server's directory is made. */
  tmp: string
  /** Its exit code (-1: ended by a signal). */
  exited: Promise<number>
  output(): string
}

/** scripts/test.ts with `env` (and `args`: the test files), given no PostgreSQL server (it starts its own when it can). */
export function startRunner(env: Record<string, string>, args: string[] = []): RunnerRun {
  const tmp = mkdtempSync(join(tmpdir(), 'suite-runner-'))
  chmodSync(tmp, 0o755) // the server's own directory in it belongs to the postgres user
  // Nothing of the suite's own run (npm test under CI sets TRAVELOPS_REQUIRE_BROWSER=1, say): only
  // `env`; but its CLI bundle (TRAVELOPS_TEST_CLI), which the runner then need not build again.
  const childEnv: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ['TRAVELOPS_TEST_PG_URL', 'TRAVELOPS_TEST_ENGINE', 'TRAVELOPS_REQUIRE_BROWSER', 'TRAVELOPS_REQUIRE_PG', 'TRAVELOPS_REQUIRE_SHELLS', 'TRAVELOPS_CHROMIUM', 'TRAVELOPS_TEST_TIMES']) delete childEnv[name]
  Object.assign(childEnv, { TMPDIR: tmp }, env)
  const proc = spawn(process.execPath, [join(ROOT, 'scripts', 'test.ts'), ...args], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  proc.stdout!.on('data', (d: Buffer) => { out += d })
  proc.stderr!.on('data', (d: Buffer) => { out += d })
  const exited = new Promise<number>((resolve) => proc.once('exit', (code) => resolve(code ?? -1)))
  return { proc, tmp, exited, output: () => out }
}

/** The run's PostgreSQL server directories and processes still there; every server found is stopped (the machine is left clean either way). */
export function leftServers(tmp: string): string[] {
  const dirs = readdirSync(tmp).filter((d) => d.startsWith('travelops-pg-'))
  const running = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((a) => a.includes(tmp) && a.includes('postgres'))
  const bin = findPgBinDir()
  for (const d of dirs) {
    try {
      pgCommand(bin!, 'pg_ctl', ['-D', join(tmp, d, 'data'), '-m', 'immediate', '-w', 'stop'])
    } catch { /* not running */ }
  }
  return [...dirs, ...running]
}
