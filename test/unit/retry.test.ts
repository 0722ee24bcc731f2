import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { DEFAULT_RETRY_BASE_MS, DEFAULT_RETRY_COUNT, nextRetryAt, retryDelayMs, deferredRetryAt, parseRetryAfter } from '../../src/delivery/retry.ts'

const MIN = 60_000
const HOUR = 60 * MIN
const half = () => 0.5
const t0 = new Date('2025-01-01T00:00:00.000Z')
const plus = (d: Date, ms: number) => new Date(d.getTime() + ms)

describe('retryDelayMs', () => {
  it('grows ×10 per retry from the base (no jitter at random() = 0.5)', () => {
    assert.deepEqual([1, 2, 3, 4].map((n) => retryDelayMs(n, 60_000, half)), [60_000, 600_000, 6_000_000, 60_000_000])
    assert.deepEqual([1, 2, 3].map((n) => retryDelayMs(n, 1000, half)), [1000, 10_000, 100_000])
  })

  it('is 10 % shorter at random() = 0 and almost 10 % longer as random() → 1', () => {
    assert.equal(retryDelayMs(1, 60_000, () => 0), 54_000)
    assert.equal(retryDelayMs(2, 60_000, () => 0), 540_000)
    const high = retryDelayMs(1, 60_000, () => 1 - Number.EPSILON)
    assert.ok(high > 65_999 && high <= 66_000, `got ${high}`)
  })

  it('stays within ±10 % over many Math.random draws, and does vary', () => {
    const seen = new Set<number>()
    for (let i = 0; i < 10_000; i++) {
      const d = retryDelayMs(2, 60_000, Math.random)
      assert.ok(d >= 540_000 && d <= 660_000, `got ${d}`)
      seen.add(d)
    }
    assert.ok(seen.size > 1000, 'jitter should spread the delays')
  })

  it('property: for any n, base and random() in [0, 1) the delay is within ±10 % of base × 10^(n-1)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 3_600_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (n, base, r) => {
          const nominal = base * 10 ** (n - 1)
          const d = retryDelayMs(n, base, () => r)
          return Number.isInteger(d) && d >= Math.floor(nominal * 0.9) && d <= Math.ceil(nominal * 1.1)
        },
      ),
    )
  })

  it('refuses a retry number below 1 or not an integer', () => {
    assert.throws(() => retryDelayMs(0, 60_000, half), RangeError)
    assert.throws(() => retryDelayMs(1.5, 60_000, half), RangeError)
  })
})

describe('nextRetryAt', () => {
  it('defaults to base 60 s and 3 retries: about 1 min, 10 min, 100 min, then stop', () => {
    assert.equal(DEFAULT_RETRY_BASE_MS, 60_000)
    assert.equal(DEFAULT_RETRY_COUNT, 3)
    let now = t0
    const gaps: number[] = []
    for (let retriesSoFar = 0; ; retriesSoFar++) {
      const at = nextRetryAt({ retriesSoFar, eventAt: t0, now, random: half })
      if (at === null) break
      gaps.push(at.getTime() - now.getTime())
      now = plus(at, 250) // the retry itself takes a moment
    }
    assert.deepEqual(gaps, [1 * MIN, 10 * MIN, 100 * MIN])
  })

  it('counts from the end of the failed attempt, not from the event', () => {
    const now = plus(t0, 5 * MIN)
    assert.deepEqual(nextRetryAt({ retriesSoFar: 1, eventAt: t0, now, random: half }), plus(now, 10 * MIN))
  })

  it('stops once retriesSoFar reaches retryCount, whatever the count', () => {
    for (const retryCount of [0, 1, 3, 5]) {
      assert.equal(nextRetryAt({ retriesSoFar: retryCount, retryCount, eventAt: t0, now: t0, baseMs: 1 }), null)
      assert.equal(nextRetryAt({ retriesSoFar: retryCount + 1, retryCount, eventAt: t0, now: t0, baseMs: 1 }), null)
      if (retryCount > 0) {
        assert.ok(nextRetryAt({ retriesSoFar: retryCount - 1, retryCount, eventAt: t0, now: t0, baseMs: 1 }) instanceof Date)
      }
    }
  })

  it('never plans a retry more than 24 h after the event', () => {
    // 4th retry with default base would be 1000 min ≈ 16.7 h after an attempt at 8 h → past 24 h
    assert.equal(nextRetryAt({ retriesSoFar: 3, retryCount: 5, eventAt: t0, now: plus(t0, 8 * HOUR), random: half }), null)
    // the same retry from an attempt at 7 h lands at 23.67 h → still allowed
    const at = nextRetryAt({ retriesSoFar: 3, retryCount: 5, eventAt: t0, now: plus(t0, 7 * HOUR), random: half })
    assert.deepEqual(at, plus(t0, 7 * HOUR + 1000 * MIN))
    // exactly 24 h is allowed, one ms later is not
    const exact = { retriesSoFar: 0, eventAt: t0, baseMs: 1000, random: half }
    assert.deepEqual(nextRetryAt({ ...exact, now: plus(t0, 24 * HOUR - 1000) }), plus(t0, 24 * HOUR))
    assert.equal(nextRetryAt({ ...exact, now: plus(t0, 24 * HOUR - 999) }), null)
  })

  it('property: a planned retry is in the future, within jitter bounds and within 24 h of the event', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 30 * HOUR }),
        fc.integer({ min: 1, max: 600_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (retriesSoFar, retryCount, sinceEvent, baseMs, r) => {
          const now = plus(t0, sinceEvent)
          const at = nextRetryAt({ retriesSoFar, retryCount, eventAt: t0, now, baseMs, random: () => r })
          if (retriesSoFar >= retryCount) return at === null
          const nominal = baseMs * 10 ** retriesSoFar
          const earliest = now.getTime() + Math.floor(nominal * 0.9)
          if (earliest - t0.getTime() > 24 * HOUR) return at === null
          if (at === null) return now.getTime() + Math.ceil(nominal * 1.1) - t0.getTime() > 24 * HOUR
          const gap = at.getTime() - now.getTime()
          return gap >= Math.floor(nominal * 0.9) && gap <= Math.ceil(nominal * 1.1) && at.getTime() - t0.getTime() <= 24 * HOUR
        },
      ),
    )
  })
})

describe('Retry-After (CONTRACT §11)', () => {
  const now = new Date('2026-11-24T12:00:00.000Z')
  it('reads delay-seconds and HTTP dates; anything else is ignored', () => {
    assert.equal(parseRetryAfter('3', now), 3000)
    assert.equal(parseRetryAfter(' 120 ', now), 120_000)
    assert.equal(parseRetryAfter('Tue, 24 Nov 2026 12:00:30 GMT', now), 30_000)
    assert.equal(parseRetryAfter('Tue, 24 Nov 2026 11:00:00 GMT', now), 0)
    for (const bad of [undefined, null, '', '-1', '1.5', 'soon', '2026-11-24']) assert.equal(parseRetryAfter(bad, now), null, String(bad))
  })
  it('pushes the automatic schedule back, never forward, and never past 24 h after the event', () => {
    const scheduled = new Date(now.getTime() + 1000)
    assert.equal(deferredRetryAt(scheduled, 3000, now, now)!.getTime(), now.getTime() + 3000)
    assert.equal(deferredRetryAt(scheduled, 500, now, now), scheduled)
    assert.equal(deferredRetryAt(scheduled, null, now, now), scheduled)
    assert.equal(deferredRetryAt(null, 3000, now, now), null, 'no retry left stays no retry')
    assert.equal(deferredRetryAt(scheduled, 25 * 3600 * 1000, now, now), null)
  })
})
