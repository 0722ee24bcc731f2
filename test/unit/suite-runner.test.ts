import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { test } from 'node:test'
import { leftServers, startRunner } from '../helpers/suite-runner.ts'

// It once refused to run without a required Chromium after starting its PostgreSQL server, and left it running.
test('refusing to run without a required Chromium, npm test\'s runner starts no PostgreSQL server (it checks first)', async () => {
  const r = startRunner({ TRAVELOPS_REQUIRE_BROWSER: '1', TRAVELOPS_CHROMIUM: '/nonexistent/chromium' })
  try {
    assert.equal(await r.exited, 1, r.output())
    assert.match(r.output(), /TRAVELOPS_REQUIRE_BROWSER=1 but there is no Chromium at \/nonexistent\/chromium/)
    assert.deepEqual(leftServers(r.tmp), [])
  } finally {
    rmSync(r.tmp, { recursive: true, force: true })
  }
})
