import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { launchChromium } from '../helpers/browser.ts'

// playwright makes its artifacts and profile directories in the temporary directory before it
// finds the browser missing, and left both behind on every such launch.
test('launching a Chromium that is not there fails with the way to install it and leaves nothing in the temporary directory', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'travelops-browser-'))
  const before = process.env.TMPDIR
  process.env.TMPDIR = tmp
  try {
    await assert.rejects(launchChromium('/nonexistent/chromium'), /no Chromium at \/nonexistent\/chromium.*install Debian's chromium/)
    assert.deepEqual(readdirSync(tmp), [])
  } finally {
    if (before === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = before
    rmSync(tmp, { recursive: true, force: true })
  }
})
