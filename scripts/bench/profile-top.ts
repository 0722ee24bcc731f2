// `npx tsx scripts/bench/profile-top.ts <file.cpuprofile> [n]`: where a `node --cpu-prof`
// profile spends its time — self time by function, and by file (node_modules packages grouped).
// Given a sampling heap profile (BENCH_HEAP_PROFILE), where serve allocates: bytes by function and file.
import { readFileSync } from 'node:fs'

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }
interface HeapNode { callFrame: Node['callFrame']; selfSize: number; children: HeapNode[] }

function main(): void {
  const [file, n = '25'] = process.argv.slice(2)
  if (!file) throw new Error('usage: profile-top.ts <file.cpuprofile | file.heapprofile> [n]')
  const json = JSON.parse(readFileSync(file, 'utf8')) as Profile | { head: HeapNode }
  if ('head' in json) return _heap(json.head, Number(n))
  const p = json
  const byId = new Map(p.nodes.map((node) => [node.id, node]))
  const self = new Map<number, number>()
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)))
  const total = [...self.values()].reduce((a, b) => a + b, 0)
  const byFn = new Map<string, number>()
  const byFile = new Map<string, number>()
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame
    const where = _where(f.url)
    const fn = `${f.functionName || '(anonymous)'} ${where}${f.url ? `:${f.lineNumber + 1}` : ''}`
    byFn.set(fn, (byFn.get(fn) ?? 0) + us)
    byFile.set(where, (byFile.get(where) ?? 0) + us)
  }
  const idle = byFn.get('(idle) ') ?? 0
  const busy = total - idle
  process.stdout.write(`total ${(total / 1e6).toFixed(2)} s, busy ${(busy / 1e6).toFixed(2)} s (percentages of busy)\n`)
  const show = (title: string, m: Map<string, number>) => {
    process.stdout.write(`\n${title}\n`)
    for (const [k, us] of [...m].filter(([k]) => k !== '(idle) ' && k !== '').sort((a, b) => b[1] - a[1]).slice(0, Number(n))) {
      process.stdout.write(`${((100 * us) / busy).toFixed(1).padStart(5)}%  ${k}\n`)
    }
  }
  const areas = _areas(byFn)
  const startup = areas.get(_STARTUP) ?? 0
  areas.delete(_STARTUP)
  process.stdout.write(`\nself time by area, in % of the busy time after start-up (start-up: ${(startup / 1e6).toFixed(2)} s)\n`)
  for (const [k, us] of [...areas].sort((a, b) => b[1] - a[1])) process.stdout.write(`${((100 * us) / (busy - startup)).toFixed(1).padStart(5)}%  ${k}\n`)
  show('self time by function', byFn)
  show('self time by file', byFile)
  show('total time (self + callees) by function', _inclusive(p, self, byId))
}

const _STARTUP = 'start-up (module loading, TypeScript)'

/** A sampling heap profile: bytes allocated (V8's estimate from its samples) by function, by file, and including callees. */
function _heap(head: HeapNode, n: number): void {
  const key = (f: Node['callFrame']) => `${f.functionName || '(anonymous)'} ${_where(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`
  const byFn = new Map<string, number>()
  const byFile = new Map<string, number>()
  const inclusive = new Map<string, number>()
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v)
  let total = 0
  const walk = (node: HeapNode, stack: string[]): number => {
    const k = key(node.callFrame)
    let sum = node.selfSize
    total += node.selfSize
    add(byFn, k, node.selfSize)
    add(byFile, _where(node.callFrame.url), node.selfSize)
    const inner = [...stack, k]
    for (const c of node.children) sum += walk(c, inner)
    if (!stack.includes(k)) add(inclusive, k, sum)
    return sum
  }
  walk(head, [])
  process.stdout.write(`allocated ${(total / 1048576).toFixed(1)} MB (V8's estimate from its samples)\n`)
  for (const [title, m] of [['bytes by function', byFn], ['bytes by file', byFile], ['bytes including callees, by function', inclusive]] as const) {
    process.stdout.write(`\n${title}\n`)
    for (const [k, b] of [...m].filter(([k]) => k !== '' && !k.startsWith('(root)')).sort((a, b) => b[1] - a[1]).slice(0, n)) {
      process.stdout.write(`${((100 * b) / total).toFixed(1).padStart(5)}%  ${(b / 1048576).toFixed(1).padStart(7)} MB  ${k}\n`)
    }
  }
}

/**
 * Self time in broad areas. SQLite's own work (native, called synchronously) shows up as
 * self time of the JS function that ran the statement: kysely's SqliteConnection.executeQuery,
 * compiled()'s _run, exclusive()'s helpers, keysVersion().
 */
function _areas(byFn: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>()
  const rules: [string, RegExp][] = [
    ['system calls (socket and log writes, reads)', /^(writev|read|write|writeBuffer|writeString|writeUtf8String) $/],
    ['SQLite statements (native)', /^(executeQuery kysely:56|_run src\/db\/compiled|\(anonymous\) src\/db\/(exclusive|connect)|commitTransaction|beginTransaction|sqliteTransaction|st\.<computed>)|better-sqlite3/],
    ['garbage collection', /^\(garbage collector\)/],
    [_STARTUP, /tsx|esbuild|node:internal\/modules|node:internal\/bootstrap|node:internal\/source_map|compileSourceTextModule|wrapSafe|internalModuleStat|readFileUtf8/],
    ['kysely (query building, executor)', /kysely/],
    ['node:http, h3, srvx, rou3', /node:_http|node:internal\/(http|stream|streams|webstreams|url|deps\/undici)|llhttp| (h3|srvx|rou3):|node:net|node:events|parserOn/],
    ['undici (outgoing webhooks)', / undici:/],
    ['crypto (key hash, HMAC, random)', /node:internal\/crypto|^(Hash|Hmac|digest|update) /],
    ['travelops code (src/)', / src\//],
  ]
  for (const [fn, us] of byFn) {
    if (fn === '(idle) ') continue
    const area = rules.find(([, re]) => re.test(fn))?.[0] ?? 'other (V8, Node internals, valibot, …)'
    out.set(area, (out.get(area) ?? 0) + us)
  }
  return out
}

/** Each function's time including what it called (a function on the stack twice counts once). */
function _inclusive(p: Profile, self: Map<number, number>, byId: Map<number, Node>): Map<string, number> {
  const parent = new Map<number, number>()
  for (const node of p.nodes) for (const c of node.children ?? []) parent.set(c, node.id)
  const out = new Map<string, number>()
  for (const [id, us] of self) {
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame
      const key = `${f.functionName || '(anonymous)'} ${_where(f.url)}${f.url ? `:${f.lineNumber + 1}` : ''}`
      if (seen.has(key)) continue
      seen.add(key)
      out.set(key, (out.get(key) ?? 0) + us)
    }
  }
  return out
}

function _where(url: string): string {
  if (!url) return ''
  const nm = url.lastIndexOf('node_modules/')
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/')
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  return url.replace(/^file:\/\//, '').replace(/^.*\/(src|scripts|cli)\//, '$1/')
}

main()
