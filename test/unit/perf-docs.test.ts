import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { compareRuns, dumpInstructions, type Comparison } from '../../scripts/bench-compare.ts'
import { PERF_DOCS, PERF_DOCS_COMMAND, readComparison, readResults, renderCompare, renderPerfDocs } from '../../scripts/perf-docs.ts'

// docs/performance.md's figures are bench/results.json's, its comparison bench/compare.json's: a new run makes the page stale.

test('docs/performance.md shows the figures of bench/results.json and the comparison of bench/compare.json', () => {
  const page = readFileSync(PERF_DOCS, 'utf8')
  const results = readResults()
  const comparison = readComparison()
  assert.ok(comparison, 'bench/compare.json')
  const want = renderPerfDocs(page, results, comparison)
  for (const f of comparison.figures) assert.ok(want.includes(`| ${f.name.replace(/\|/g, '\\|')} |`), f.id)
  assert.ok(want.includes(`\`${results.commit}\``))
  for (const f of results.figures) assert.ok(want.includes(f.name.replace(/^PostgreSQL: /, '').replace(/\|/g, '\\|')), f.id)
  assert.ok(page === want, `docs/performance.md's figures differ from bench/results.json: run ${PERF_DOCS_COMMAND}`)
})

test('the region is replaced, not appended to', () => {
  const page = 'before\n<!-- figures:start -->\nold\n<!-- figures:end -->\nafter\n'
  const once = renderPerfDocs(page, readResults())
  assert.equal(renderPerfDocs(once, readResults()), once)
  assert.ok(once.startsWith('before\n<!-- figures:start -->') && once.endsWith('<!-- figures:end -->\nafter\n') && !once.includes('old'))
})

const kinds = [{ id: 'post', name: 'POST' }, { id: 'get', name: 'GET' }]

test('a comparison takes the median of each tree\'s runs, kind by kind', () => {
  // One run of each tree had a full GC in its window (the high one).
  const before = [{ post: 1000, get: 300 }, { post: 1060, get: 300 }, { post: 1000, get: 301 }]
  const after = [{ post: 1010, get: 330 }, { post: 1012, get: 331 }, { post: 1075, get: 330 }]
  const [post, get] = compareRuns(before, after, kinds)
  assert.deepEqual(post!.before, [1000, 1060, 1000])
  assert.deepEqual(post!.after, [1010, 1012, 1075])
  assert.equal(post!.change.toFixed(4), '0.0120')
  assert.equal(get!.change.toFixed(4), '0.1000')
})

test('a run without a kind\'s figure fails the comparison; so do no runs', () => {
  assert.throws(() => compareRuns([{ post: 1000, get: 300 }], [{ post: 1000 }], kinds), /get: a run has no figure/)
  assert.throws(() => compareRuns([{ post: 1000, get: 0 }], [{ post: 1000, get: 300 }], kinds), /get: a run has no figure/)
  assert.throws(() => compareRuns([], [{ post: 1000, get: 300 }], kinds), /no runs/)
})

test('the instructions of a callgrind dump are its totals line', () => {
  assert.equal(dumpInstructions('version: 1\ncmd: node serve.mjs\nevents: Ir\nsummary: 123456789\n'), 123456789)
  assert.equal(dumpInstructions('events: Ir\nfn=(1) main\n1 5\ntotals: 42\n'), 42)
  assert.throws(() => dumpInstructions('events: Ir\n'), /no totals/)
})

test('the comparison marks a request more than 5 % dearer in instructions, and only those', () => {
  const c: Comparison = {
    generated_at: '2026-11-29T00:00:00.000Z', seconds: 600, runs: 2, before: { commit: 'b' }, after: { commit: 'a' },
    machine: { cpu: 'c', cores: 2, memory_gb: 24, node: 'v24', kernel: 'k', loadavg_start: [1], loadavg_end: [1] },
    figures: [
      { id: 'x', name: 'dearer | by 6 %', before: [1000, 1100], after: [1060, 1166], change: 0.06 },
      { id: 'y', name: 'dearer by 5 %', before: [1000, 1000], after: [1050, 1050], change: 0.05 },
      { id: 'z', name: 'cheaper', before: [1000, 1000], after: [900, 900], change: -0.1 },
    ],
  }
  const text = renderCompare(c)
  assert.ok(text.includes('| dearer \\| by 6 % | 1,050 | 1,113 | **+6 %** | 10 % / 10 % |'), text)
  assert.ok(text.includes('| dearer by 5 % | 1,000 | 1,050 | +5 % | 0 % / 0 % |'), text)
  assert.ok(text.includes('| cheaper | 1,000 | 900 | -10 % | 0 % / 0 % |'), text)
  assert.equal(text.split('\n').filter((l) => l.includes('**')).length, 1)
})
