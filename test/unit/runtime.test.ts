import assert from 'node:assert/strict'
import { test } from 'node:test'

test('the suite runs on Node.js 22 or newer (the project pins Node 24 as a devDependency)', () => {
  const major = Number(process.versions.node.split('.')[0])
  assert.ok(major >= 22, `running on Node ${process.version}; run through npm scripts so node_modules/.bin/node (24) is used`)
})
