import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { compareRuns, dumpCosts, type Comparison, type Run } from '../../scripts/bench/compare-figures.ts'
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
/** A run from [post, get] instructions, the optimizing compiler's count a tenth of each. */
const run = (post?: number, get?: number): Run => ({
  ...(post === undefined ? {} : { post: { instructions: post, compiler: post / 10 } }),
  ...(get === undefined ? {} : { get: { instructions: get, compiler: get / 10 } }),
})

test('a comparison takes the median of each tree\'s runs, kind by kind', () => {
  // One run of each tree had a full GC in its window (the high one).
  const before = [run(1000, 300), run(1060, 300), run(1000, 301)]
  const after = [run(1010, 330), run(1012, 331), run(1075, 330)]
  const [post, get] = compareRuns(before, after, kinds)
  assert.deepEqual(post!.before, [1000, 1060, 1000])
  assert.deepEqual(post!.after, [1010, 1012, 1075])
  assert.deepEqual(post!.compiler, { before: [100, 106, 100], after: [101, 101.2, 107.5] })
  assert.equal(post!.change.toFixed(4), '0.0120')
  assert.equal(get!.change.toFixed(4), '0.1000')
})

test('a run without a kind\'s figure fails the comparison; so do no runs', () => {
  assert.throws(() => compareRuns([run(1000, 300)], [run(1000)], kinds), /get: a run has no figure/)
  assert.throws(() => compareRuns([run(1000, 0)], [run(1000, 300)], kinds), /get: a run has no figure/)
  assert.throws(() => compareRuns([], [run(1000, 300)], kinds), /no runs/)
})

test('a callgrind dump gives its totals, and the optimizing compiler\'s part of them', () => {
  assert.deepEqual(dumpCosts('version: 1\ncmd: node serve.mjs\nevents: Ir\nsummary: 123456789\n'), { instructions: 123456789, compiler: 0 })
  assert.throws(() => dumpCosts('events: Ir\n'), /no totals/)
  // Names given once and then by number; calls into the compiler from JIT code and from a
  // builtin count with what they called; its call into itself and a baseline compile do not.
  const dump = [
    'version: 1', 'positions: line', 'events: Ir',
    'fn=(1) ???', '1 500',
    'cfn=(2) v8::internal::Runtime_OptimizeTurbofanEager(int, unsigned long*, v8::internal::Isolate*)', 'calls=1 0', '1 7000',
    'fn=(3) Builtins_CEntry_Return1_ArgvOnStack_NoBuiltinExit', '+2 40',
    'cfn=(2)', 'calls=2 0', '* 3000',
    'cfn=(4) v8::internal::Compiler::CompileBaseline(v8::internal::Isolate*)', 'calls=1 0', '-1 90',
    'fn=(2)', '0 9910',
    'cfn=(2)', 'calls=1 0', '0 400',
    'cfn=(5) v8::internal::Runtime_CompileOptimized_Concurrent(int)', 'calls=1 0', '0 100',
    'totals: 12000',
  ].join('\n')
  assert.deepEqual(dumpCosts(dump), { instructions: 12000, compiler: 10000 })
  // With instruction addresses as well as lines, the cost is the third field.
  assert.deepEqual(dumpCosts(dump.replace('positions: line', 'positions: instr line').replace('1 7000', '0x10 1 7000').replace('* 3000', '* * 3000')), { instructions: 12000, compiler: 10000 })
})

test('the comparison marks a request more than 5 % dearer in instructions, and only those', () => {
  const c: Comparison = {
    generated_at: '2026-11-29T00:00:00.000Z', seconds: 600, runs: 2, before: { commit: 'b' }, after: { commit: 'a' },
    machine: { cpu: 'c', cores: 2, memory_gb: 24, node: 'v24', kernel: 'k', loadavg_start: [1], loadavg_end: [1] },
    figures: [
      { id: 'x', name: 'dearer | by 6 %', before: [1000, 1100], after: [1060, 1166], change: 0.06, compiler: { before: [400, 600], after: [300, 500] } },
      { id: 'y', name: 'dearer by 5 %', before: [1000, 1000], after: [1050, 1050], change: 0.05, compiler: { before: [0, 0], after: [0, 0] } },
      { id: 'z', name: 'cheaper', before: [1000, 1000], after: [900, 900], change: -0.1, compiler: { before: [10, 10], after: [10, 10] } },
    ],
  }
  const text = renderCompare(c)
  assert.ok(text.includes('| dearer \\| by 6 % | 1,050 | 1,113 | **+6 %** | 10 % / 10 % | 500 / 400 |'), text)
  assert.ok(text.includes('| dearer by 5 % | 1,000 | 1,050 | +5 % | 0 % / 0 % | 0 / 0 |'), text)
  assert.ok(text.includes('| cheaper | 1,000 | 900 | -10 % | 0 % / 0 % | 10 / 10 |'), text)
  assert.equal(text.split('\n').filter((l) => l.includes('**')).length, 1)
})
