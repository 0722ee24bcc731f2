import { build } from 'esbuild'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** One file of the dashboard: what it is and its bytes. */
export interface BuiltAsset {
  type: string
  body: string
}

/** The dashboard's files by name: `index.html` and the hashed `assets/…` it names. Bodies are base64. */
export type BuiltDashboard = Record<string, BuiltAsset>

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
}

/**
 * Builds the dashboard from `dashboard/` with esbuild (already installed: tsx runs on it), all in
 * memory: Preact, Chart.js and ofetch are bundled from node_modules into one script and one
 * style sheet, named by their content's hash so they can be cached for ever. The checkout runs
 * this on the first /dashboard request; scripts/package.ts runs it and embeds the result.
 */
export async function buildDashboard(root: string, minify = true): Promise<BuiltDashboard> {
  const dir = join(root, 'dashboard')
  const result = await build({
    absWorkingDir: root,
    entryPoints: [join(dir, 'main.tsx')],
    outdir: '/assets',
    entryNames: 'app-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    write: false,
    minify,
    format: 'esm',
    target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    platform: 'browser',
    legalComments: 'none',
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  const files: BuiltDashboard = {}
  const tags: string[] = []
  for (const f of result.outputFiles) {
    const name = `assets/${f.path.split('/').pop()!}`
    const ext = name.slice(name.lastIndexOf('.'))
    files[name] = { type: TYPES[ext] ?? 'application/octet-stream', body: Buffer.from(f.contents).toString('base64') }
    if (ext === '.css') tags.push(`<link rel="stylesheet" href="/dashboard/${name}">`)
    if (ext === '.js') tags.push(`<script type="module" src="/dashboard/${name}"></script>`)
  }
  const icon = readFileSync(join(dir, 'icon.svg'))
  const iconName = `assets/icon-${createHash('sha256').update(icon).digest('hex').slice(0, 8)}.svg`
  files[iconName] = { type: TYPES['.svg']!, body: icon.toString('base64') }
  const html = readFileSync(join(dir, 'index.html'), 'utf8')
    .replace('<!--assets-->', tags.join('\n    '))
    .replace('<!--icon-->', `<link rel="icon" href="/dashboard/${iconName}" type="image/svg+xml">`)
  files['index.html'] = { type: 'text/html; charset=utf-8', body: Buffer.from(html).toString('base64') }
  return files
}
