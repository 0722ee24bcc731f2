import assert from 'node:assert/strict'
import { test } from 'node:test'
import { defaultMaxConnections, openFileLimit } from '../../src/http/connections.ts'

const limits = (soft: string) => [
  'Limit                     Soft Limit           Hard Limit           Units     ',
  'Max processes             63412                63412                processes ',
  `Max open files            ${soft.padEnd(20)} 1048576              files     `,
  'Max locked memory         8388608              8388608              bytes     ',
].join('\n')

test('the default bound keeps 1,024 descriptors for the rest, or half of a small limit', () => {
  for (const [soft, bound] of [['20000', 18_976], ['4096', 3_072], ['2048', 1_024], ['1024', 512], ['256', 128], ['1', 1], ['unlimited', 1_047_552]] as const) {
    assert.equal(defaultMaxConnections(limits(soft)), bound, soft)
  }
})

test('the limit is read from /proc/self/limits; without it 1,024 is assumed', () => {
  assert.equal(openFileLimit(limits('4096')), 4096)
  assert.equal(openFileLimit('no such line'), null)
  assert.equal(defaultMaxConnections('no such line'), 512)
  const own = openFileLimit()
  assert.ok(own === null || own > 0)
})
