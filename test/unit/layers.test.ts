import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { test } from 'node:test'
import { importedSpecifiers } from '../helpers/source-ast.ts'

// The layers of docs/architecture.md, lowest first: a file may import its own layer and the
// layers below it, never one above. Every import counts, `import type` and `await import()`
// included: a type names the layer it comes from as much as a value does.
const LAYERS: readonly { name: string; paths: readonly string[] }[] = [
  { name: 'lib', paths: ['src/lib/', 'src/version.ts', 'src/node-flags.ts'] },
  { name: 'config', paths: ['src/config.ts', 'src/config-defaults.ts'] },
  { name: 'db', paths: ['src/db/'] },
  { name: 'delivery', paths: ['src/delivery/'] },
  { name: 'engine', paths: ['src/engine/'] },
  { name: 'context', paths: ['src/context.ts'] },
  { name: 'events', paths: ['src/events/'] },
  { name: 'http', paths: ['src/http/'] },
  { name: 'modules', paths: ['src/modules/'] },
  { name: 'app', paths: ['src/app.ts', 'src/auth.ts', 'src/routes.ts', 'src/server.ts', 'src/pages/'] },
  { name: 'cli', paths: ['cli/'] },
]

/** Known exceptions to the layer order: none. A lower layer that needs a higher one's work takes it as an argument. */
const KNOWN_UPWARD: readonly { from: string; to: string }[] = []

const ROOT = resolve(import.meta.dirname, '../..')

test('every import points down the layers, or within one', () => {
  const upward = edges().filter((e) => rank(e.to) > rank(e.from) && !_known(e)).map((e) => `${e.from} (${layer(e.from)}) → ${e.to} (${layer(e.to)})`)
  assert.deepEqual(upward, [], 'a lower layer imports a higher one')
})

test('the imports have no cycle', () => {
  const graph = new Map<string, string[]>()
  for (const e of edges()) if (!_known(e)) graph.set(e.from, [...(graph.get(e.from) ?? []), e.to])
  assert.deepEqual(cycles(graph), [], 'files that import each other, directly or around a loop')
})

test('a module is reached only through its index.ts', () => {
  const past = edges().filter((e) => {
    const target = /^src\/modules\/([^/]+)\/(.+)$/.exec(e.to)
    return target !== null && !e.from.startsWith(`src/modules/${target[1]}/`) && target[2] !== 'index.ts'
  }).map((e) => `${e.from} → ${e.to}`)
  assert.deepEqual(past, [], 'imports past a module\'s index.ts')
})

test('services throw domain errors and routes render pages: only routes.ts in a module imports from http/', () => {
  // A module's routes.ts is its HTTP face; its schemas, services and repositories know no HTTP
  // status and render no page (lib/errors.ts holds their errors; http/errors.ts maps them).
  const http = edges().filter((e) => e.from.startsWith('src/modules/') && e.to.startsWith('src/http/')
    && !/\/routes\.ts$/.test(e.from)).map((e) => `${e.from} → ${e.to}`)
  assert.deepEqual(http, [], 'a module file other than routes.ts imports http/')
})

test('the check sees a lower layer importing a higher one, and a cycle', () => {
  assert.ok(rank('src/lib/ids.ts') < rank('src/db/tx.ts') && rank('src/modules/orders/service.ts') < rank('src/app.ts'))
  assert.ok(!_known({ from: 'src/delivery/worker.ts', to: 'src/http/errors.ts' }))
  assert.deepEqual(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]])), [['a', 'b', 'c']])
  assert.throws(() => rank('src/elsewhere/file.ts'), /in no layer/)
})

interface Edge {
  from: string
  to: string
}

let _edges: Edge[] | undefined

/** Every import between two files of src/ and cli/, as paths from the repository's root. */
function edges(): Edge[] {
  if (_edges) return _edges
  _edges = []
  for (const file of [..._files('src'), ..._files('cli')]) {
    for (const specifier of importedSpecifiers(file, readFileSync(join(ROOT, file), 'utf8'))) {
      if (!specifier.startsWith('.')) continue
      const to = relative(ROOT, resolve(ROOT, dirname(file), specifier))
      if (to.startsWith('src/') || to.startsWith('cli/')) _edges.push({ from: file, to })
    }
  }
  for (const e of _edges) rank(e.from) // every file is in a layer
  return _edges
}

function layer(file: string): string {
  const found = LAYERS.find((l) => l.paths.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p)))
  if (!found) throw new Error(`${file} is in no layer: give it one in test/unit/layers.test.ts and docs/architecture.md`)
  return found.name
}

function rank(file: string): number {
  const name = layer(file)
  return LAYERS.findIndex((l) => l.name === name)
}

function _known(e: Edge): boolean {
  return KNOWN_UPWARD.some((k) => e.from.startsWith(k.from) && e.to.startsWith(k.to))
}

/** The loops of a graph: each strongly connected set of more than one file (or a file importing itself), sorted. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const out: string[][] = []
  const visit = (node: string) => {
    index.set(node, index.size)
    low.set(node, index.get(node)!)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!))
    }
    if (low.get(node) === index.get(node)) {
      const part: string[] = []
      let top: string
      do {
        top = stack.pop()!
        onStack.delete(top)
        part.push(top)
      } while (top !== node)
      if (part.length > 1 || graph.get(node)?.includes(node)) out.push(part.sort())
    }
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return out.sort((a, b) => a[0]!.localeCompare(b[0]!))
}

function _files(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.d.ts'))
    .map((f) => `${dir}/${f}`)
    .sort()
}
