// The CLI the tests spawn: cli/index.ts bundled by esbuild into one CommonJS file, much as
// scripts/package.ts bundles it for the executable, and run by plain Node with Node's compile
// cache. Through cli/bin.cjs every spawn started tsx's loader and read ~150 modules through it:
// 0.5–0.6 s of CPU for `tenants list` on a 2-core machine, against 0.1 s for this bundle with a
// warm compile cache; the CLI tests spawn it hundreds of times. It is the same program (same
// sources, same packages, real process); what stays on cli/bin.cjs and the launcher is tested
// there: test/cli/startup.test.ts, test/cli/old-node.test.ts and test/readme.test.ts (`./travelops`).
// scripts/test.ts builds it once per run (TRAVELOPS_TEST_CLI); a test file run on its own builds
// its own, once, into a temporary directory removed when the process exits.
import { build } from 'esbuild'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { buildDashboard } from '../../src/pages/dashboard-build.ts'
import { buildReference } from '../../src/pages/reference-build.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const _require = createRequire(import.meta.url)

/** The environment variable that names a bundle already built (by scripts/test.ts). */
export const CLI_BUNDLE_ENV = 'TRAVELOPS_TEST_CLI'

/** Bundles the CLI into `dir`/cli.cjs and returns that path. */
export async function buildCliBundle(dir: string): Promise<string> {
  const outfile = join(dir, 'cli.cjs')
  await build({
    absWorkingDir: ROOT,
    entryPoints: ['cli/index.ts'],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    packages: 'bundle',
    // Optional packages nothing here loads (as in scripts/package.ts).
    external: ['pg-native', '@parcel/watcher', '@parcel/watcher-wasm'],
    define: {
      // The checkout builds these on the first request from a module named by a variable (so
      // the executable's bundle leaves esbuild out); a bundle carries them built, as the executable does.
      __TRAVELOPS_DASHBOARD__: JSON.stringify(await buildDashboard(ROOT)),
      __TRAVELOPS_REFERENCE__: JSON.stringify(buildReference(ROOT)),
    },
    // Each module keeps its own import.meta (its source file), so migrations/ is read from the
    // checkout as `./travelops` reads it.
    plugins: [{ name: 'import-meta-of-source', setup: (b) => {
      // better-sqlite3 finds its native addon from its own place in node_modules: required from there.
      b.onResolve({ filter: /^better-sqlite3$/ }, () => ({ path: _require.resolve('better-sqlite3'), external: true }))
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const meta: Record<string, string> = { url: pathToFileURL(args.path).href, filename: args.path, dirname: dirname(args.path) }
        const contents = readFileSync(args.path, 'utf8').replace(/\bimport\.meta\.(url|filename|dirname)\b/g, (_, k: string) => JSON.stringify(meta[k]))
        return { contents, loader: 'ts' }
      })
    } }],
    logLevel: 'warning',
  })
  return outfile
}

let _bundle: Promise<string> | undefined

/** The bundle to spawn: TRAVELOPS_TEST_CLI's, else one built for this process. */
export function cliBundle(): Promise<string> {
  return (_bundle ??= (async () => {
    const given = process.env[CLI_BUNDLE_ENV]
    if (given) return given
    const dir = mkdtempSync(join(tmpdir(), 'travelops-test-cli-'))
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
    return buildCliBundle(dir)
  })())
}

/** The environment a spawned bundle adds: Node's compile cache next to the bundle, shared by every spawn. */
export function cliBundleEnv(bundle: string): Record<string, string> {
  return { NODE_COMPILE_CACHE: join(dirname(bundle), 'compile-cache') }
}
