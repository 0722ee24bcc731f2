import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { BIN } from '../helpers/cli.ts'

test('started by a Node older than 22, the CLI says what to do and exits 1 instead of crashing', () => {
  const preload = fileURLToPath(new URL('../fixtures/pretend-node-20.cjs', import.meta.url))
  const r = spawnSync(process.execPath, ['-r', preload, BIN, '--version'], { encoding: 'utf8' })
  assert.equal(r.status, 1)
  assert.equal(r.stdout, '')
  assert.match(r.stderr, /needs Node\.js 22 or newer; this is v20\.11\.1/)
  assert.match(r.stderr, /npx travelops/)
})
