import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { NODE_FLAGS } from '../../src/node-flags.ts'

test('the checkout\'s ./travelops launcher passes exactly the V8 flags of src/node-flags.ts', () => {
  const launcher = readFileSync(new URL('../../travelops', import.meta.url), 'utf8')
  const exec = launcher.split('\n').find((l) => l.startsWith('exec '))!
  assert.equal(exec, `exec "$node" ${NODE_FLAGS.join(' ')} "$here/cli/bin.cjs" "$@"`)
})
