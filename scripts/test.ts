// `npm test` after the type check: the whole suite on SQLite, then the API, delivery and CLI
// tests again on PostgreSQL (TRAVELOPS_TEST_ENGINE=postgres), with test/postgres/ (several
// serve processes, db copy) in the first pass. The PostgreSQL server is TRAVELOPS_TEST_PG_URL
// when given, else one started here (test/helpers/pg-server.ts) and stopped at the end, or when
// the run is refused or interrupted.
// Without PostgreSQL binaries the SQLite half runs and a loud warning says the other half did
// not; TRAVELOPS_REQUIRE_PG=1 makes that a failure (.ci/run installs PostgreSQL first). The
// dashboard's browser tests (test/dashboard/) need Debian's chromium: without it they are left
// out with the same loud warning (TRAVELOPS_REQUIRE_BROWSER=1 makes that a failure).
import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { constants } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { findPgBinDir, startPgServer, type PgServer } from '../test/helpers/pg-server.ts'
import { CHROMIUM, hasChromium } from '../test/helpers/browser.ts'

const ROOT = fileURLToPath(new URL('../', import.meta.url))

/** Tests about SQLite itself, run on SQLite only, each with the reason. */
const SQLITE_ONLY: Record<string, string> = {
  'test/cli/backup.test.ts': 'backup copies a SQLite file (on PostgreSQL it points to pg_dump: test/postgres)',
  'test/cli/file-modes.test.ts': 'modes of the SQLite file and its -wal/-shm',
  'test/cli/opening.test.ts': 'missing, foreign and non-SQLite files (PostgreSQL: test/postgres/opening.test.ts)',
  'test/cli/old-node.test.ts': 'no database',
  'test/cli/startup.test.ts': 'no database',
  'test/cli/completion.test.ts': 'no database',
  'test/cli/verify.test.ts': 'no database',
  'test/delivery/one-serve.test.ts': 'one serve per SQLite file (PostgreSQL takes several: test/postgres/multi-process.test.ts)',
}

const files = (dir: string): string[] => readdirSync(join(ROOT, dir)).flatMap((f) => {
  const path = join(dir, f)
  return statSync(join(ROOT, path)).isDirectory() ? files(path) : f.endsWith('.test.ts') ? [path] : []
})

/** The PostgreSQL server this run started (or is starting), stopped however the run ends: a refusal, the end, Ctrl-C. */
let server: Promise<PgServer> | undefined
/** The test process running now. */
let child: ChildProcess | undefined
/** A signal came: no further test process is started. */
let interrupted = false

async function main(): Promise<number> {
  // Everything that refuses to run is checked before a server is started.
  const browser = hasChromium()
  if (!browser && process.env.TRAVELOPS_REQUIRE_BROWSER === '1') {
    process.stderr.write(`TRAVELOPS_REQUIRE_BROWSER=1 but there is no Chromium at ${CHROMIUM} (install Debian's chromium)\n`)
    return 1
  }
  try {
    let pgUrl = process.env.TRAVELOPS_TEST_PG_URL
    if (!pgUrl) {
      if (findPgBinDir()) {
        server = startPgServer()
        pgUrl = (await server).url
      } else if (process.env.TRAVELOPS_REQUIRE_PG === '1') {
        process.stderr.write('TRAVELOPS_REQUIRE_PG=1 but no PostgreSQL server binaries were found (install Debian\'s postgresql)\n')
        return 1
      }
    }
    const all = files('test').filter((f) => !f.startsWith('test/package/') && (browser || !f.startsWith('test/dashboard/')))
    const first = pgUrl ? all : all.filter((f) => !f.startsWith('test/postgres/'))
    const sqlite = await _run('SQLite', first, { ...(pgUrl ? { TRAVELOPS_TEST_PG_URL: pgUrl } : {}) })
    if (interrupted) return 1
    if (!browser) {
      _banner([
        `The dashboard's browser tests (test/dashboard/) were NOT run: no Chromium at ${CHROMIUM}.`,
        'Install Debian\'s chromium package (or set TRAVELOPS_CHROMIUM to a Chromium binary)',
        'and run npm test again. CI always runs them: .ci/run installs chromium first.',
      ])
    }
    if (!pgUrl) {
      _banner([
        'The PostgreSQL half of the suite was NOT run: no PostgreSQL server binaries were found.',
        'Install Debian\'s postgresql package (or set TRAVELOPS_TEST_PG_URL to a server of yours)',
        'and run npm test again. CI always runs both halves: .ci/run installs PostgreSQL first.',
      ])
      return sqlite
    }
    const second = all.filter((f) => /^test\/(api|delivery|cli)\//.test(f) && !(f in SQLITE_ONLY))
    const postgres = await _run('PostgreSQL', second, { TRAVELOPS_TEST_ENGINE: 'postgres', TRAVELOPS_TEST_PG_URL: pgUrl })
    return sqlite || postgres
  } finally {
    await _stopServer()
  }
}

async function _stopServer(): Promise<void> {
  const s = server
  server = undefined
  await (await s?.catch(() => undefined))?.stop()
}

// Interrupted (Ctrl-C, a CI timeout): the test process is ended first, then the server is stopped.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    interrupted = true
    const running = child
    const ended = running && running.exitCode === null && running.signalCode === null
      ? new Promise<void>((r) => { running.once('exit', () => r()); running.kill(signal) })
      : Promise.resolve()
    void ended.then(_stopServer).finally(() => process.exit(128 + constants.signals[signal]))
  })
}

function _run(engine: string, list: string[], env: Record<string, string>): Promise<number> {
  if (interrupted) return Promise.resolve(1)
  process.stdout.write(`\n# ${engine}: ${list.length} test files\n`)
  return new Promise((resolve) => {
    child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...list], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...env } })
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}

function _banner(lines: string[]): void {
  const width = Math.max(...lines.map((l) => l.length))
  const bar = '!'.repeat(width + 4)
  process.stderr.write(`\n${bar}\n${lines.map((l) => `! ${l.padEnd(width)} !`).join('\n')}\n${bar}\n\n`)
}

process.exitCode = await main()
