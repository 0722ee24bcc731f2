// The benchmark's `serve` runs as users run it: bundled JavaScript under plain Node, not
// TypeScript through tsx. tsx's loader keeps its transforms and source maps in the process
// (measured: ~40 MB of RSS at rest, 128 against 89 MB for dist/travelops), which would count
// in the peak-RSS figure. esbuild bundles scripts/bench/serve.ts (the server and the bench's
// IPC handlers) with the migrations embedded as in the executable; packages stay imports,
// resolved from node_modules, so the file is written under node_modules/.cache.
import { build } from 'esbuild'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { readMigrationDir } from '../../src/db/migration-files.ts'

/** Bundles `scripts/bench/<script>` and returns the path of the .mjs file to run with node. */
export async function bundleBenchScript(root: string, script: string): Promise<string> {
  const dir = join(root, 'node_modules', '.cache', 'travelops-bench')
  mkdirSync(dir, { recursive: true })
  const outfile = join(dir, script.replace(/\.ts$/, '.mjs'))
  await build({
    absWorkingDir: root,
    entryPoints: [join('scripts', 'bench', script)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    packages: 'external',
    define: {
      __TRAVELOPS_MIGRATIONS__: JSON.stringify(readMigrationDir(join(root, 'migrations'))),
      __TRAVELOPS_PG_MIGRATIONS__: JSON.stringify(readMigrationDir(join(root, 'migrations', 'postgres'))),
    },
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
  })
  return outfile
}
