import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { test } from 'node:test'
import { leftServers, startRunner } from '../helpers/suite-runner.ts'

// It once refused to run without a required Chromium after starting its PostgreSQL server, and left it running.
test('refusing to run without a required Chromium, npm test\'s runner starts no PostgreSQL server (it checks first)', async () => {
  const r = startRunner({ TRAVELOPS_REQUIRE_BROWSER: '1', TRAVELOPS_CHROMIUM: '/nonexistent/chromium' })
  try {
    assert.equal(await r.exited, 1, r.output())
    assert.match(r.output(), /TRAVELOPS_REQUIRE_BROWSER=1 but no Chromium could start \(\/nonexistent\/chromium: no Chromium at \/nonexistent\/chromium/)
    assert.deepEqual(leftServers(r.tmp), [])
  } finally {
    rmSync(r.tmp, { recursive: true, force: true })
  }
})

test('the summary gives each pass\'s counts, names every failing test again with its diff, says what was left out, and ends on the counts line', async () => {
  const r = startRunner({ TRAVELOPS_CHROMIUM: '/nonexistent/chromium', TRAVELOPS_TEST_PG_URL: 'postgres://unused@127.0.0.1:1/none' }, ['test/fixtures/summary.test.ts'])
  try {
    assert.equal(await r.exited, 1, r.output())
    const summary = r.output().slice(r.output().lastIndexOf('Summary\n'))
    assert.match(summary, /^SQLite +4 run, +2 passed, 2 failed {2}\(\d+\.\d s\)$/m)
    assert.match(summary, /^browser +not run: no Chromium could start \(\/nonexistent\/chromium: no Chromium at/m)
    assert.match(summary, /^PostgreSQL +not run: none of the test files asked for belongs to it$/m)
    assert.match(summary, /^ {2}\[SQLite\] test\/fixtures\/summary\.test\.ts › a suite › fails on purpose\n {6}one is not two\n {6}1 !== 2$/m)
    // An assertion's diff is shown whole: it is what says how a test failed (it was cut at its first blank line).
    assert.match(summary, /^ {2}\[SQLite\] test\/fixtures\/summary\.test\.ts › a suite › fails with a diff\n {6}Expected values to be strictly deep-equal:\n {6}\+ actual - expected\n {8}\[\n {6}\+ {3}'late',\n {6} {4}'early',\n {6}- {3}'late'\n {6} {2}\]$/m)
    assert.match(summary, /^ {2}- \[SQLite\] test\/fixtures\/summary\.test\.ts: the shell is not installed \(fixture\)$/m)
    assert.match(summary, /^ {2}SQLite:\n +\d+\.\d s {2}test\/fixtures\/summary\.test\.ts \(4 tests\)$/m)
    assert.ok(r.output().endsWith('\n2 passed, 2 failed, 0 skipped\n'), r.output().slice(-200))
  } finally {
    rmSync(r.tmp, { recursive: true, force: true })
  }
})
