import assert from 'node:assert/strict'
import { test } from 'node:test'
import { validate, version } from 'uuid'
import { newId, newIdAt } from '../../src/lib/ids.ts'

// Ids of one fan-out (many made in the same millisecond) stay short: distinct within their
// first 12 characters after the prefix (issue 54), still increasing and valid version-7 UUIDs.

const head = (id: string) => id.slice(id.indexOf('_') + 1, id.indexOf('_') + 13)
const uuid = (id: string) => id.slice(id.indexOf('_') + 1)

test('1,000 ids made in one millisecond differ within their first 12 characters and increase', () => {
  const ms = Date.UTC(2031, 4, 6, 7, 8, 9, 10)
  const ids = Array.from({ length: 1000 }, () => newIdAt('del', ms))
  assert.equal(new Set(ids.map(head)).size, 1000)
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} then ${ids[i]}`)
  for (const id of ids) {
    assert.match(id, /^del_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    assert.ok(validate(uuid(id)) && version(uuid(id)) === 7, id)
  }
})

test('past 1,024 in one window the ids still increase and stay unique; other prefixes keep their own count', () => {
  const ms = Date.UTC(2032, 1, 2, 3, 4, 5, 6)
  const reqs = Array.from({ length: 5000 }, () => newIdAt('req', ms))
  const dels = Array.from({ length: 3000 }, () => newIdAt('del', ms))
  for (const ids of [reqs, dels]) {
    assert.equal(new Set(ids).size, ids.length)
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!)
  }
  // Requests' ids did not use up the deliveries' short heads.
  assert.equal(new Set(dels.slice(0, 1000).map(head)).size, 1000)
})

test('ids sort by creation time: a later window sorts after, a clock going back does not reorder', () => {
  const t0 = Date.UTC(2033, 0, 1)
  const a = newIdAt('ord', t0)
  const b = newIdAt('ord', t0 + 1)
  const c = newIdAt('ord', t0 + 300)
  const d = newIdAt('ord', t0 - 5000)
  const e = newIdAt('ord', t0 + 60_000)
  assert.deepEqual([e, d, c, b, a].sort(), [a, b, c, d, e])
  // An id of today's clock sorts after the ids made before this scheme (plain UUIDv7: 019… in 2025–2026).
  assert.ok(newId('ord') > 'ord_019f0000-0000-7000-8000-000000000000')
})
