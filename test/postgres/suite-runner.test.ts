import assert from 'node:assert/strict'
import { readdirSync, rmSync } from 'node:fs'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { leftServers, startRunner } from '../helpers/suite-runner.ts'

// Here, not in test/unit: it needs PostgreSQL's server binaries, which this directory's tests run with.
test('interrupted while its PostgreSQL server starts, npm test\'s runner stops that server, starts no test and exits 143', async () => {
  const r = startRunner({ TRAVELOPS_CHROMIUM: '/nonexistent/chromium' })
  try {
    for (const end = Date.now() + 30_000; !readdirSync(r.tmp).some((d) => d.startsWith('travelops-pg-'));) {
      assert.ok(Date.now() < end, `no server started within 30 s: ${r.output()}`)
      await sleep(10)
    }
    r.proc.kill('SIGTERM')
    assert.equal(await r.exited, 143, r.output())
    assert.doesNotMatch(r.output(), /# SQLite: \d+ test files/, 'no test run was started')
    assert.deepEqual(leftServers(r.tmp), [])
  } finally {
    rmSync(r.tmp, { recursive: true, force: true })
  }
})
