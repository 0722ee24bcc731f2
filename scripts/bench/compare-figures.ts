// What `npm run bench:compare` (scripts/bench-compare.ts) measures and writes, apart from running
// it: the kinds of request, bench/compare.json's shape, the medians, and reading a callgrind dump.
// docs/performance.md's comparison (scripts/perf-docs.ts) is rendered from these alone.
import { fileURLToPath } from 'node:url'
import type { Results } from './report.ts'

export const COMPARE = fileURLToPath(new URL('../../bench/compare.json', import.meta.url))

/** Requests a kind is warmed up with, then measured over (valgrind runs serve ~50× slower). */
export const KINDS = [
  { id: 'post-delivered', name: 'POST /v1/orders, 2 subscriptions, both delivered', warmup: 3000, measured: 2000 },
  { id: 'get-order', name: 'GET /v1/orders/:id', warmup: 3000, measured: 6000 },
  { id: 'list-orders', name: 'GET /v1/orders?limit=20', warmup: 2000, measured: 2000 },
] as const
export type Kind = (typeof KINDS)[number]['id']
/** Every figure: each kind on SQLite, then on PostgreSQL (`pg-` ids). */
export const FIGURES = [
  ...KINDS.map((k) => ({ id: k.id, name: k.name })),
  ...KINDS.map((k) => ({ id: `pg-${k.id}`, name: `PostgreSQL: ${k.name}` })),
]

export interface ComparedFigure {
  id: string
  name: string
  /** Instructions of serve per request outside V8's optimizing compiler, one value per run. */
  before: number[]
  after: number[]
  /** median(after) ÷ median(before) − 1 */
  change: number
  /** Instructions per request inside the optimizing compiler, one value per run (not in `before`, `after` or `change`). */
  compiler: { before: number[]; after: number[] }
}

/** Instructions outside and inside the optimizing compiler: of a dump, or a request's share of one. */
export interface Costs {
  instructions: number
  compiler: number
}

/** One run of one tree: per kind, its costs a request. */
export type Run = Record<string, Costs>

export interface Comparison {
  generated_at: string
  seconds: number
  runs: number
  before: { commit: string }
  after: { commit: string }
  machine: Results['machine']
  figures: ComparedFigure[]
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** One figure per kind: each tree's runs and the change of the medians. */
export function compareRuns(before: Run[], after: Run[], kinds: readonly { id: string; name: string }[] = FIGURES): ComparedFigure[] {
  if (before.length === 0 || after.length === 0) throw new Error('no runs to compare')
  return kinds.map((k) => {
    const b = before.map((r) => r[k.id])
    const a = after.map((r) => r[k.id])
    if ([...b, ...a].some((x) => !x || !(x.instructions > 0) || !(x.compiler >= 0))) throw new Error(`${k.id}: a run has no figure`)
    const ins = (xs: typeof b) => xs.map((x) => x!.instructions)
    return {
      id: k.id, name: k.name, before: ins(b), after: ins(a), change: median(ins(a)) / median(ins(b)) - 1,
      compiler: { before: b.map((x) => x!.compiler), after: a.map((x) => x!.compiler) },
    }
  })
}

/**
 * V8's entries into its optimizing compilers. With `--single-threaded` they compile on the main
 * thread, inside the request that tipped a function over its budget.
 */
const OPTIMIZING = /^v8::internal::Runtime_(?:OptimizeTurbofanEager|OptimizeMaglevEager|CompileOptimized\w*|CompileOnStackReplacement|StartTurbofanOptimizeJob|StartMaglevOptimizeJob)\(/

/**
 * What one callgrind dump counted: all the instructions (its totals line), and those inside the
 * optimizing compiler: the inclusive cost of every call into an OPTIMIZING entry from outside one.
 * Reads callgrind's format with name compression (`fn=(7) name` once, `fn=(7)` after), a
 * `calls=` line followed by the call's inclusive cost, the first event (Ir) after the positions.
 */
export function dumpCosts(text: string): Costs {
  const m = /^(?:summary|totals): (\d+)/m.exec(text)
  if (!m) throw new Error('no totals in a callgrind dump')
  const positions = (/^positions: (.+)$/m.exec(text)?.[1] ?? 'line').trim().split(/\s+/).length
  const names = new Map<string, string>()
  const name = (v: string): string => {
    const c = /^\((\d+)\)(?: (.*))?$/.exec(v)
    if (!c) return v
    if (c[2] !== undefined) names.set(c[1]!, c[2])
    return names.get(c[1]!) ?? ''
  }
  let fn = ''
  let callee = ''
  let call = false
  let compiler = 0
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=')) fn = name(line.slice(3))
    else if (line.startsWith('cfn=')) callee = name(line.slice(4))
    else if (line.startsWith('calls=')) call = true
    else if (call && /^[\d+*-]/.test(line)) {
      call = false
      if (OPTIMIZING.test(callee) && !OPTIMIZING.test(fn)) compiler += Number(line.split(/\s+/)[positions] ?? 0)
    }
  }
  return { instructions: Number(m[1]), compiler }
}
