import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { EDGE_WINDOW_MS, timeWindows } from '../../src/modules/webhooks/repo.ts'

// GET /v1/webhooks/stats reads the settled part of an edge hour's attempts in windows of time,
// a turn of the event loop between two, each sized so that its read takes about EDGE_WINDOW_MS:
// in one statement, half an hour of a busy tenant's attempts held every other tenant on SQLite
// (0.2 s at a million attempts an hour, 0.8 s at four). Here the reads are fake, and so is the
// clock that times them: a read costs `perSecond` ms for each second of attempt time it covers.

const iso = (ms: number) => new Date(ms).toISOString()
const T0 = Date.UTC(2026, 10, 27, 4, 30)

async function run(since: string, until: string, perSecond: (at: number) => number, o: { first?: number; least?: number } = {}) {
  let clock = 0
  const windows: { since: string; until: string; took: number; turned: boolean }[] = []
  let turned = true
  await timeWindows(since, until, async (a, b) => {
    const took = ((Date.parse(b) - Date.parse(a)) / 1000) * perSecond(Date.parse(a))
    windows.push({ since: a, until: b, took, turned })
    clock += took
    turned = false
    setImmediate(() => (turned = true))
  }, { ...o, now: () => clock })
  return windows
}

describe('timeWindows', () => {
  it('covers the range exactly, window after window, each starting where the last ended, the last ending at `until` as given', async () => {
    await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 3 * 3_600_000 }), fc.integer({ min: 0, max: 999 }), fc.double({ min: 0, max: 50, noNaN: true }),
      async (length, ms, cost) => {
        const since = iso(T0 + ms)
        const until = iso(T0 + ms + length)
        const w = await run(since, until, () => cost)
        assert.equal(w[0]!.since, since)
        assert.equal(w.at(-1)!.until, until)
        for (let i = 1; i < w.length; i++) assert.equal(w[i]!.since, w[i - 1]!.until)
        for (const x of w) assert.ok(x.since < x.until, `${x.since} < ${x.until}`)
      }), { numRuns: 50 })
    assert.deepEqual(await run(iso(T0), iso(T0), () => 1), [], 'an empty range reads nothing')
  })

  it('reads free of cost double from one second; a turn of the event loop comes before every window but the first', async () => {
    const w = await run(iso(T0), iso(T0 + 1_800_000), () => 0)
    assert.deepEqual(w.slice(0, 5).map((x) => Date.parse(x.until) - Date.parse(x.since)), [1_000, 2_000, 4_000, 8_000, 16_000])
    assert.equal(w.length, 11)
    assert.ok(w.slice(1).every((x) => x.turned), 'each window after a turn')
  })

  it("sizes each window by the last one's pace: at a steady cost every window after the first takes about EDGE_WINDOW_MS, and where the attempts get denser the windows shrink", async () => {
    // 40 ms a second: far more than a window should take; the first (1 s) takes 40 ms, the rest EDGE_WINDOW_MS or a ms less (whole ms of time).
    const steady = await run(iso(T0), iso(T0 + 600_000), () => 40)
    assert.equal(steady[0]!.took, 40)
    for (const x of steady.slice(1, -1)) assert.ok(x.took <= EDGE_WINDOW_MS && x.took > EDGE_WINDOW_MS - 0.1, `${x.took} ms`)
    // Sparse attempts, then a burst: windows grow over the sparse part, and the first window into the burst is the only one past the mark.
    const burstAt = T0 + 900_000
    const bursty = await run(iso(T0), iso(T0 + 1_800_000), (at) => (at < burstAt ? 0.01 : 200))
    const over = bursty.filter((x) => x.took > EDGE_WINDOW_MS)
    assert.equal(over.length, 1, JSON.stringify(over))
    for (const x of bursty.slice(bursty.indexOf(over[0]!) + 1, -1)) assert.ok(x.took <= EDGE_WINDOW_MS, `${x.took} ms`)
    // Never shorter than a millisecond of time, whatever a read costs.
    const dense = await run(iso(T0), iso(T0 + 1_020), () => 1e9)
    assert.deepEqual(dense.map((x) => Date.parse(x.until) - Date.parse(x.since)), [1_000, ...Array(20).fill(1)])
  })

  it('whole hours (the hours\' sums): windows of whole hours from one, doubling while fast, one hour at the least however slow', async () => {
    const H = 3_600_000
    const from = Date.UTC(2026, 10, 20)
    const hours = (w: { since: string; until: string }[]) => w.map((x) => (Date.parse(x.until) - Date.parse(x.since)) / H)
    const fast = await run(iso(from), iso(from + 168 * H), () => 0, { first: H, least: H })
    assert.deepEqual(hours(fast), [1, 2, 4, 8, 16, 32, 64, 41])
    // 0.01 ms a second of time: 36 ms an hour; each window stays one hour, every window on a turn of its own.
    const slow = await run(iso(from), iso(from + 24 * H), () => 0.01, { first: H, least: H })
    assert.deepEqual(hours(slow), Array(24).fill(1))
    assert.ok(slow.slice(1).every((x) => x.turned))
    for (const x of [...fast, ...slow]) assert.match(x.since, /T\d\d:00:00\.000Z$/)
  })
})
