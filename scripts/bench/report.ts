// The benchmark's output: one row per figure, printed as a table and written to bench/results.json.
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, release, totalmem } from 'node:os'
import { dirname } from 'node:path'

export interface Figure {
  id: string
  name: string
  unit: string
  value: number
  /** The baseline's figure, measured in the same run right before; null when the figure has none. */
  baseline: number | null
  ratio: number | null
  target: string
  /** null in a `--quick` run (no targets judged) */
  pass: boolean | null
  engine?: 'sqlite' | 'postgres'
  /** Server CPU time per request (or per delivery), µs; and the baseline's. */
  cpuUs: number | null
  baselineCpuUs: number | null
  notes?: string
  [extra: string]: unknown
}

export interface Results {
  generated_at: string
  commit: string
  machine: { cpu: string; cores: number; memory_gb: number; node: string; kernel: string; loadavg_start: number[]; loadavg_end?: number[] }
  settings: Record<string, unknown>
  figures: Figure[]
  seconds: number
}

/** The machine, with its 1/5/15-minute load averages now: call at the start of the run. */
export function machine(): Results['machine'] {
  const c = cpus()
  return {
    cpu: c[0]?.model ?? 'unknown', cores: c.length, memory_gb: Math.round(totalmem() / 2 ** 30), node: process.version, kernel: release(),
    loadavg_start: loadavg().map((x) => Math.round(x * 100) / 100),
  }
}

export function gitCommit(root: string): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: root, encoding: 'utf8' }).trim() !== ''
    return dirty ? `${sha}+dirty` : sha
  } catch {
    return 'unknown'
  }
}

export function writeResults(file: string, results: Results): void {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n')
}

export function printTable(results: Results): void {
  const rows = [['figure', 'engine', 'value', 'baseline', 'ratio', 'target', 'CPU/req µs (base)', 'ok']]
  for (const f of results.figures) {
    rows.push([
      f.name,
      f.engine ?? '',
      `${fmt(f.value)} ${f.unit}`,
      f.baseline === null ? '—' : fmt(f.baseline),
      f.ratio === null ? '—' : f.ratio.toFixed(2),
      f.target,
      f.cpuUs === null ? '—' : `${fmt(f.cpuUs)}${f.baselineCpuUs === null ? '' : ` (${fmt(f.baselineCpuUs)})`}`,
      f.pass === null ? '—' : f.pass ? 'yes' : 'NO',
    ])
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ')
  process.stdout.write(`\n${line(rows[0]!)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n`)
  for (const r of rows.slice(1)) process.stdout.write(line(r) + '\n')
  const m = results.machine
  process.stdout.write(`\n${m.cpu}, ${m.cores} cores, Node ${m.node}, commit ${results.commit}, ${results.seconds.toFixed(0)} s, ` +
    `load average ${m.loadavg_start[0]} at the start, ${m.loadavg_end?.[0] ?? '?'} at the end (other work on the machine shifts every figure)\n`)
}

export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x)
  return x >= 100 ? Math.round(x).toString() : x >= 10 ? x.toFixed(1) : x.toFixed(2)
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}
