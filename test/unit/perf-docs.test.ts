import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { PERF_DOCS, PERF_DOCS_COMMAND, readResults, renderPerfDocs } from '../../scripts/perf-docs.ts'

// docs/performance.md's figures are bench/results.json's: a new full run makes the page stale.

test('docs/performance.md shows the figures of bench/results.json', () => {
  const page = readFileSync(PERF_DOCS, 'utf8')
  const results = readResults()
  const want = renderPerfDocs(page, results)
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
