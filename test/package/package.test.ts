// The packaged executable, run the way an operator runs it: dist/travelops copied alone into an
// empty directory, no Node.js on PATH, no node_modules anywhere above it, a fresh HOME.
// Slow (it builds the executable), so it is not part of `npm test`: run `npm run test:package`.
// TRAVELOPS_SKIP_BUILD=1 reuses dist/travelops when it is newer than every input.
import assert from 'node:assert/strict'
import { spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, test } from 'node:test'
import { readMigrationDir } from '../../src/db/migration-files.ts'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const DIST_EXE = join(ROOT, 'dist', 'travelops')
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
const BUILD_INPUTS = ['package.json', 'package-lock.json', 'cli', 'src', 'migrations', 'scripts/package.ts']

interface Sandbox {
  root: string
  exe: string // the executable, alone in its directory
  home: string
  tmp: string
  work: string // cwd of every run; database files live here
}

let sb: Sandbox

before(() => {
  ensureExecutable()
  sb = makeSandbox()
})

after(() => {
  rmSync(sb.root, { recursive: true, force: true })
})

// ---- steps ----------------------------------------------------------------------------

test('the sandbox has no Node 24 on PATH and no node_modules above it', () => {
  assert.deepEqual(readdirSync(dirname(sb.exe)), ['travelops'])
  for (const dir of [dirname(sb.exe), sb.work]) {
    for (let d = dir; ; d = dirname(d)) {
      assert.equal(existsSync(join(d, 'node_modules')), false, `${d} has node_modules`)
      if (dirname(d) === d) break
    }
  }
  const found = spawnSync('/bin/sh', ['-c', 'command -v node && node --version'], { env: baseEnv(sb), encoding: 'utf8' })
  assert.doesNotMatch(found.stdout, /^v24\./m, `a Node 24 is reachable on PATH: ${found.stdout}`)
})

test('--version prints the version from package.json', () => {
  const res = run(sb, ['--version'])
  assert.equal(res.stdout.trim(), PKG.version)
})

test('--help lists the commands', () => {
  const res = run(sb, ['--help'])
  assert.match(res.stdout, /Usage: travelops/)
})

test('opens a fresh database file through the embedded native addon', () => {
  const report = openFreshDatabase(sb, join(sb.work, 'fresh.db'))
  assert.equal(report.sea, true)
  assert.equal(report.node, 'v24.21.0')
  assert.equal(report.journal_mode, 'wal')
  assert.match(String(report.sqlite), /^3\.\d+\.\d+$/)
  assert.equal(report.migrations, countMigrationFiles())
})

test('the native addon is extracted once to ~/.cache/travelops/<hash>/ and reused', () => {
  const file = cachedAddon(join(sb.home, '.cache', 'travelops'))
  const before = statSync(file)
  openFreshDatabase(sb, join(sb.work, 'again.db'))
  const after = statSync(file)
  assert.equal(after.ino, before.ino, 'the cached addon was rewritten')
  assert.equal(after.mtimeMs, before.mtimeMs)
})

test('a damaged cached addon is replaced', () => {
  const file = cachedAddon(join(sb.home, '.cache', 'travelops'))
  writeFileSync(file, 'not a shared object')
  openFreshDatabase(sb, join(sb.work, 'repaired.db'))
  assert.ok(statSync(file).size > 100_000)
})

test('TRAVELOPS_CACHE_DIR chooses the cache directory', () => {
  const cache = join(sb.root, 'custom-cache')
  openFreshDatabase(sb, join(sb.work, 'custom.db'), { TRAVELOPS_CACHE_DIR: cache })
  cachedAddon(cache)
})

test('without a usable home directory the addon goes to the temporary directory', () => {
  const env = { HOME: '/dev/null/nohome', XDG_CACHE_HOME: '' }
  openFreshDatabase(sb, join(sb.work, 'nohome.db'), env)
  cachedAddon(join(sb.tmp, `travelops-${process.getuid?.() ?? 'user'}`))
})

test('NODE_OPTIONS cannot change the executable', () => {
  const res = run(sb, ['--version'], { NODE_OPTIONS: '--require /nonexistent/hook.js' })
  assert.equal(res.stdout.trim(), PKG.version)
})

// ---- harness --------------------------------------------------------------------------

/** Builds dist/travelops, or checks that a requested reuse is of a fresh one. */
function ensureExecutable(): void {
  if (process.env.TRAVELOPS_SKIP_BUILD === '1') {
    assert.ok(existsSync(DIST_EXE), 'TRAVELOPS_SKIP_BUILD=1 but dist/travelops does not exist')
    const built = statSync(DIST_EXE).mtimeMs
    const stale = BUILD_INPUTS.flatMap((p) => _files(join(ROOT, p))).filter((f) => statSync(f).mtimeMs > built)
    assert.deepEqual(stale, [], 'TRAVELOPS_SKIP_BUILD=1 but dist/travelops is older than these inputs')
    return
  }
  const res = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'package.ts')], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 600_000,
  })
  assert.equal(res.status, 0, `npm run package failed:\n${res.stdout}\n${res.stderr}`)
}

function makeSandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'travelops-pkg-'))
  const s: Sandbox = {
    root,
    exe: join(root, 'bin', 'travelops'),
    home: join(root, 'home'),
    tmp: join(root, 'tmp'),
    work: join(root, 'work'),
  }
  for (const d of [dirname(s.exe), s.home, s.tmp, s.work]) mkdirSync(d, { recursive: true })
  copyFileSync(DIST_EXE, s.exe)
  chmodSync(s.exe, 0o755)
  return s
}

/** PATH without any Node (only the system directories), a private HOME and TMPDIR. */
function baseEnv(s: Sandbox): NodeJS.ProcessEnv {
  return { PATH: '/usr/bin:/bin', HOME: s.home, TMPDIR: s.tmp, LANG: 'C' }
}

function run(s: Sandbox, args: string[], env: NodeJS.ProcessEnv = {}, expectStatus = 0): SpawnSyncReturns<string> {
  const res = spawnSync(s.exe, args, { cwd: s.work, env: { ...baseEnv(s), ...env }, encoding: 'utf8', timeout: 30_000 })
  if (res.error) throw res.error
  assert.equal(res.status, expectStatus, `travelops ${args.join(' ')} exited ${res.status}\n${res.stdout}\n${res.stderr}`)
  return res
}

function runJson(s: Sandbox, args: string[], env: NodeJS.ProcessEnv = {}): Record<string, unknown> {
  return JSON.parse(run(s, [...args, '--json'], env).stdout) as Record<string, unknown>
}

/** The DB-opening command of the current CLI on a database file that does not exist yet. */
function openFreshDatabase(s: Sandbox, db: string, env: NodeJS.ProcessEnv = {}): Record<string, unknown> {
  assert.equal(existsSync(db), false)
  const report = runJson(s, ['selftest', '--db', db], env)
  assert.ok(existsSync(db), `${db} was not created`)
  return report
}

function cachedAddon(cacheDir: string): string {
  const entries = readdirSync(cacheDir)
  assert.equal(entries.length, 1, `expected one <hash> directory in ${cacheDir}: ${entries.join(', ')}`)
  const file = join(cacheDir, entries[0]!, 'better_sqlite3.node')
  assert.ok(existsSync(file), `${file} missing`)
  return file
}

function countMigrationFiles(): number {
  const dir = join(ROOT, 'migrations')
  return existsSync(dir) ? readMigrationDir(dir).length : 0
}

function _files(path: string): string[] {
  if (!existsSync(path)) return []
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .map((f) => join(path, f))
    .filter((f) => statSync(f).isFile())
}
