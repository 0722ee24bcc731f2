import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { DISABLE_AFTER, durationPattern, KEY_LIFETIME, LINK_LIFETIME, parseDuration, RETENTION, type DurationRange } from '../../src/lib/duration.ts'

// The OpenAPI document states each duration field's range as a pattern (CONTRACT §16: the
// document says what the server enforces): the pattern must accept exactly what parseDuration() does.
const RANGES: Record<string, DurationRange> = { KEY_LIFETIME, LINK_LIFETIME, RETENTION, DISABLE_AFTER, narrow: { minMs: 90_000, maxMs: 7_200_000 } }

const candidates = fc.oneof(
  fc.tuple(fc.stringMatching(/^0{0,3}$/), fc.nat({ max: 2_000_000 }), fc.constantFrom('s', 'm', 'h', 'd', 'w', '')).map(([z, n, u]) => `${z}${n}${u}`),
  fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.constantFrom('s', 'm', 'h', 'd')).map(([n, u]) => `${n}${u}`),
  fc.constantFrom('0', '', ' 1d', '1d ', '1.5h', '-1d', '1D', '604800s', '604801s', '10080m', '10081m', '168h', '169h', '7d', '8d', '3650d', '3651d', '59s', '60s', '90s', '120m', '121m'),
  fc.string({ maxLength: 8 }),
)

for (const [name, range] of Object.entries(RANGES)) {
  test(`durationPattern(${name}) accepts exactly what parseDuration accepts`, () => {
    const pattern = new RegExp(durationPattern(range))
    fc.assert(fc.property(candidates, (text) => {
      assert.equal(pattern.test(text), parseDuration(text, range) !== null, `${JSON.stringify(text)} against ${pattern}`)
    }), { numRuns: 3000, seed: 20261129 })
  })
}
