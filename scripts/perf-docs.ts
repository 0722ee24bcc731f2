import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

// The figures of docs/performance.md are generated from bench/results.json (the last full
// `npm run bench`): `npx tsx scripts/perf-docs.ts` rewrites the region between the two markers;
// test/unit/perf-docs.test.ts fails when they differ from the results file. A second region
// compares each figure's CPU per request with bench/baseline.json, a run of the tree a change
// started from (kept while that comparison is the one the page reports).

export const PERF_DOCS = fileURLToPath(new URL('../docs/performance.md', import.meta.url))
export const RESULTS = fileURLToPath(new URL('../bench/results.json', import.meta.url))
export const BASELINE = fileURLToPath(new URL('../bench/baseline.json', import.meta.url))
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
 * The comparison region: every figure both runs measured with a CPU per request (or per
 * delivery), before and after, and the change; one that grew by more than WORSE is marked.
 */
export function renderCompare(before: Results, after: Results): string {
  const out = [
    CSTART,
    `<!-- Generated from bench/baseline.json and bench/results.json by \`${PERF_DOCS_COMMAND}\`; do not edit by hand. -->`,
    '',
    `Before: \`${before.commit}\` (${before.generated_at.slice(0, 10)}, load average ${before.machine.loadavg_start[0]} → ${before.machine.loadavg_end[0]}). `
      + `After: \`${after.commit}\` (${after.generated_at.slice(0, 10)}, load average ${after.machine.loadavg_start[0]} → ${after.machine.loadavg_end[0]}). `
      + `CPU per request (per delivery for the loops), µs; marked when more than ${WORSE * 100} % worse.`,
    '',
    '| figure | before | after | change |',
    '|---|---|---|---|',
  ]
  const was = new Map(before.figures.map((f) => [f.id, f]))
  for (const f of after.figures) {
    const b = was.get(f.id)
    if (!b || f.unit === '×' || typeof f.cpuUs !== 'number' || typeof b.cpuUs !== 'number' || b.cpuUs <= 0) continue
    const change = f.cpuUs / b.cpuUs - 1
    const text = `${change >= 0 ? '+' : ''}${_num(change * 100, 1)} %`
    out.push(`| ${f.name.replace(/\|/g, '\\|')} | ${_num(b.cpuUs, 1)} | ${_num(f.cpuUs, 1)} | ${change > WORSE ? `**${text}**` : text} |`)
  }
  out.push('', CEND)
  return out.join('\n')
}

/** docs/performance.md with its figures region made from `results` (and its comparison with `baseline`, when given). */
export function renderPerfDocs(page: string, results: Results, baseline?: Results): string {
  const a = page.indexOf(START)
  const b = page.indexOf(END)
  if (a < 0 || b < a) throw new Error(`docs/performance.md has no ${START} … ${END} region`)
  let next = page.slice(0, a) + renderFigures(results) + page.slice(b + END.length)
  const c = next.indexOf(CSTART)
  const d = next.indexOf(CEND)
  if (baseline && c >= 0 && d > c) next = next.slice(0, c) + renderCompare(baseline, results) + next.slice(d + CEND.length)
  return next
}

export function readBaseline(): Results | undefined {
  try {
    return JSON.parse(readFileSync(BASELINE, 'utf8')) as Results
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
  const next = renderPerfDocs(page, readResults(), readBaseline())
  if (process.argv.includes('--check')) {
    if (next !== page) console.error(`docs/performance.md's figures differ from bench/results.json: run ${PERF_DOCS_COMMAND}`)
    process.exitCode = next === page ? 0 : 1
  } else writeFileSync(PERF_DOCS, next)
}
