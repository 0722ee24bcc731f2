import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { PERF_DOCS, PERF_DOCS_COMMAND, readBaseline, readResults, renderCompare, renderPerfDocs } from '../../scripts/perf-docs.ts'

// docs/performance.md's figures are bench/results.json's: a new full run makes the page stale.

test('docs/performance.md shows the figures of bench/results.json', () => {
  const page = readFileSync(PERF_DOCS, 'utf8')
  const results = readResults()
  const want = renderPerfDocs(page, results, readBaseline())
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

test('the comparison marks a figure more than 5 % worse in CPU per request, and only those', () => {
  const results = readResults()
  const f = results.figures.find((x) => typeof x.cpuUs === 'number' && x.unit !== '×')!
  const before = { ...results, commit: 'before', figures: results.figures.map((x) => x.id === f.id ? { ...x, cpuUs: f.cpuUs! / 1.06 } : x) }
  const text = renderCompare(before, results)
  const row = text.split('\n').find((l) => l.startsWith(`| ${f.name.replace(/\|/g, '\\|')} |`))!
  assert.match(row, /\*\*\+6 %\*\* \|$/)
  assert.equal(text.split('\n').filter((l) => l.includes('**')).length, 1)
})
