import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { COMPARE, median, type Comparison } from './bench/compare-figures.ts'

// The figures of docs/performance.md are generated from bench/results.json (the last full
// `npm run bench`): `npx tsx scripts/perf-docs.ts` rewrites the region between the two markers;
// test/unit/perf-docs.test.ts fails when they differ from the results file. A second region
// shows bench/compare.json: two trees' instructions per request (scripts/bench-compare.ts).

export const PERF_DOCS = fileURLToPath(new URL('../docs/performance.md', import.meta.url))
export const RESULTS = fileURLToPath(new URL('../bench/results.json', import.meta.url))
export const PERF_DOCS_COMMAND = 'npx tsx scripts/perf-docs.ts'
const START = '<!-- figures:start -->'
const END = '<!-- figures:end -->'
const CSTART = '<!-- compare:start -->'
const CEND = '<!-- compare:end -->'
/** A figure whose CPU per request grew by more than this share is marked (the project's rule: 5 %). */
export const WORSE = 0.05

interface Figure {
  id: string
  name: string
  unit: string
  value: number
  ratio: number | null
  target: string
  pass: boolean
  cpuUs?: number | null
  baselineCpuUs?: number
  engine: 'sqlite' | 'postgres'
}

interface Results {
  generated_at: string
  commit: string
  seconds: number
  machine: { cpu: string; cores: number; memory_gb: number; node: string; loadavg_start: number[]; loadavg_end: number[] }
  figures: Figure[]
}

/** The generated region (markers included) for a results file. */
export function renderFigures(results: Results): string {
  const m = results.machine
  const out = [
    START,
    `<!-- Generated from bench/results.json by \`${PERF_DOCS_COMMAND}\`; do not edit by hand. -->`,
    '',
    `Run on commit \`${results.commit}\`, ${results.generated_at.slice(0, 10)}, in ${Math.round(results.seconds)} s: ${m.cores} cores (${m.cpu}), `
      + `${m.memory_gb} GB, Node ${m.node.replace(/^v/, '')}, load average ${m.loadavg_start[0]} at the start and ${m.loadavg_end[0]} at the end.`,
    '',
  ]
  for (const engine of ['sqlite', 'postgres'] as const) {
    out.push(`**${engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'}**`, '', '| figure | value | ratio to baseline | CPU per request | target | met |', '|---|---|---|---|---|---|')
    for (const f of results.figures.filter((x) => x.engine === engine)) {
      const name = f.name.replace(/^PostgreSQL: /, '').replace(/\|/g, '\\|')
      const ratio = f.ratio === null || f.ratio === undefined ? '' : _num(f.ratio, 3)
      const cpu = f.unit === '×' || f.cpuUs === undefined || f.cpuUs === null ? '' : `${_num(f.cpuUs, 1)} µs`
      const info = f.target === '(info)'
      out.push(`| ${name} | ${_value(f)} | ${ratio} | ${cpu} | ${info ? '—' : f.target} | ${info ? '' : f.pass ? 'yes' : '**no**'} |`)
    }
    out.push('')
  }
  out.push(END)
  return out.join('\n')
}

/**
 * The comparison region, from bench/compare.json (scripts/bench-compare.ts): for each kind of
 * request, the instructions serve executed per request in each tree (the median of its runs), the
 * change, and how far each tree's own runs lay apart; a change above WORSE is marked.
 */
export function renderCompare(c: Comparison): string {
  const out = [
    CSTART,
    `<!-- Generated from bench/compare.json by \`${PERF_DOCS_COMMAND}\`; do not edit by hand. -->`,
    '',
    `Before: \`${c.before.commit}\`. After: \`${c.after.commit}\`. Measured ${c.generated_at.slice(0, 10)} in ${Math.round(c.seconds / 60)} min, `
      + `${c.runs} run${c.runs === 1 ? '' : 's'} of each tree's \`serve\` under callgrind. Instructions per request outside V8's optimizing compiler, the median of the runs; `
      + `marked when more than ${WORSE * 100} % more. The spread is how far each tree's own runs lay apart (highest ÷ lowest − 1). `
      + 'The last column is the median of what the optimizing compiler added per request, not counted in the change.',
    '',
    '| request | before | after | change | spread before / after | compiling before / after |',
    '|---|---|---|---|---|---|',
  ]
  const count = (n: number) => Math.round(n).toLocaleString('en-US')
  const spread = (xs: number[]) => `${_num((Math.max(...xs) / Math.min(...xs) - 1) * 100, 1)} %`
  for (const f of c.figures) {
    const text = `${f.change >= 0 ? '+' : ''}${_num(f.change * 100, 1)} %`
    out.push(`| ${f.name.replace(/\|/g, '\\|')} | ${count(median(f.before))} | ${count(median(f.after))} | ${f.change > WORSE ? `**${text}**` : text} | ${spread(f.before)} / ${spread(f.after)} | ${count(median(f.compiler.before))} / ${count(median(f.compiler.after))} |`)
  }
  out.push('', CEND)
  return out.join('\n')
}

/** docs/performance.md with its figures region made from `results` (and its comparison from `comparison`, when given). */
export function renderPerfDocs(page: string, results: Results, comparison?: Comparison): string {
  const a = page.indexOf(START)
  const b = page.indexOf(END)
  if (a < 0 || b < a) throw new Error(`docs/performance.md has no ${START} … ${END} region`)
  let next = page.slice(0, a) + renderFigures(results) + page.slice(b + END.length)
  const c = next.indexOf(CSTART)
  const d = next.indexOf(CEND)
  if (comparison && c >= 0 && d > c) next = next.slice(0, c) + renderCompare(comparison) + next.slice(d + CEND.length)
  return next
}

export function readComparison(): Comparison | undefined {
  try {
    return JSON.parse(readFileSync(COMPARE, 'utf8')) as Comparison
  } catch {
    return undefined
  }
}

export function readResults(): Results {
  return JSON.parse(readFileSync(RESULTS, 'utf8')) as Results
}

function _value(f: Figure): string {
  if (f.unit === 'req/s' || f.unit === '/s') return `${Math.round(f.value).toLocaleString('en-US')} ${f.unit}`
  if (f.unit === 'ms') return `${_num(f.value, f.value < 10 ? 2 : 0)} ms`
  if (f.unit === 'MB') return `${_num(f.value, 0)} MB`
  return `${_num(f.value, 3)}${f.unit === '×' ? '×' : ` ${f.unit}`}`
}

const _num = (n: number, digits: number) => String(Number(n.toFixed(digits)))

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const page = readFileSync(PERF_DOCS, 'utf8')
  const next = renderPerfDocs(page, readResults(), readComparison())
  if (process.argv.includes('--check')) {
    if (next !== page) console.error(`docs/performance.md's figures differ from bench/results.json: run ${PERF_DOCS_COMMAND}`)
    process.exitCode = next === page ? 0 : 1
  } else writeFileSync(PERF_DOCS, next)
}
