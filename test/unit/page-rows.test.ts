import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { readPageRows, SCAN_BUDGET, WINDOW_MS, type WindowFloor } from '../../src/db/page-rows.ts'
import { toPage } from '../../src/http/pagination.ts'

// readPageRows() over a table held in memory: ids in descending order, a filter no index serves.
// The fake statements count the records they look at, as SQLite's would step over them.

interface Row { id: string; match: boolean }

/** `n` rows, newest (largest id) first; `match(i)` for the i-th oldest. */
function table(n: number, match: (i: number) => boolean): Row[] {
  return Array.from({ length: n }, (_, k) => n - 1 - k).map((i) => ({ id: `r${String(i).padStart(8, '0')}`, match: match(i) }))
}

function statements(rows: Row[]) {
  const seen = { read: 0, counted: 0 }
  /** The index of the first row with an id below `after` (ids descend: a binary search). */
  const below = (after: string | undefined) => {
    if (after === undefined) return 0
    let [lo, hi] = [0, rows.length]
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (rows[mid]!.id < after) hi = mid
      else lo = mid + 1
    }
    return lo
  }
  /** The filtered query: ids < after and ≥ floor, matching rows only, at most n; every row it passes is looked at. */
  const read = async (after: string | undefined, n: number, floor?: string): Promise<Row[]> => {
    const out: Row[] = []
    for (let i = below(after); i < rows.length && out.length < n; i++) {
      const r = rows[i]!
      if (floor !== undefined && r.id < floor) break
      seen.read++
      if (r.match) out.push(r)
    }
    return out
  }
  /** The window's floor: the k-th id below after (an index-only walk of k entries). */
  const windows: WindowFloor = async (after, k) => {
    const start = below(after)
    seen.counted += Math.min(k, rows.length - start)
    return rows[start + k - 1]?.id
  }
  return { read, windows, seen }
}

/** Pages through the list as a client would: every page's records, and what each page looked at. */
async function pageThrough(rows: Row[], limit: number) {
  const s = statements(rows)
  const ids: string[] = []
  const looked: number[] = []
  let cursor: string | undefined
  for (let pages = 0; ; pages++) {
    assert.ok(pages <= rows.length + 10, 'paging ends')
    const before = s.seen.read
    const page = toPage(await readPageRows(limit, cursor, s.read, s.windows), limit, (r) => r)
    looked.push(s.seen.read - before)
    ids.push(...page.data.map((r) => r.id))
    assert.equal(page.has_more, page.next_cursor !== null)
    if (!page.next_cursor) break
    cursor = JSON.parse(Buffer.from(page.next_cursor, 'base64url').toString()).after
  }
  return { ids, looked, seen: s.seen }
}

describe('readPageRows in windows (a filter no index serves)', () => {
  it('stops a page after SCAN_BUDGET records when nothing matches, and goes on from there', async () => {
    const rows = table(SCAN_BUDGET * 2 + 5_000, () => false)
    const { ids, looked } = await pageThrough(rows, 20)
    assert.deepEqual(ids, [])
    assert.deepEqual(looked, [SCAN_BUDGET, SCAN_BUDGET, 5_000])
  })

  it('finds the oldest records across empty pages, each once and in order', async () => {
    const rows = table(SCAN_BUDGET + 30_000, (i) => i < 3 || i === 50_000)
    const { ids, looked } = await pageThrough(rows, 2)
    assert.deepEqual(ids, rows.filter((r) => r.match).map((r) => r.id))
    assert.ok(looked.every((n) => n <= SCAN_BUDGET), `records looked at per page: ${looked}`)
  })

  it('reads a full page of dense matches in one window without counting the rest of the table', async () => {
    const rows = table(500_000, (i) => i % 3 === 0)
    const s = statements(rows)
    const page = toPage(await readPageRows(20, undefined, s.read, s.windows), 20, (r) => r)
    assert.equal(page.data.length, 20)
    assert.equal(page.has_more, true)
    assert.ok(s.seen.read <= 63, `${s.seen.read} records read`)
    assert.equal(s.seen.counted, 1_000)
  })

  it('gives every matching record once, newest first, whatever the table, the filter and the page size', async () => {
    await fc.assert(fc.asyncProperty(
      fc.integer({ min: 0, max: SCAN_BUDGET * 2 + 3_000 }),
      fc.oneof(
        fc.constant((_: number) => false),
        fc.integer({ min: 1, max: 40_000 }).map((m) => (i: number) => i % m === 0),
        fc.array(fc.nat(), { maxLength: 12 }).map((at) => (i: number) => at.some((a) => a % 250_000 === i)),
      ),
      fc.integer({ min: 1, max: 100 }),
      async (n, match, limit) => {
        const rows = table(n, match)
        const { ids, looked } = await pageThrough(rows, limit)
        assert.deepEqual(ids, rows.filter((r) => r.match).map((r) => r.id))
        assert.ok(looked.every((k) => k <= SCAN_BUDGET + limit + 1), `records looked at per page: ${looked}`)
      },
    ), { numRuns: 60 })
  })

  it('sizes each window by how long the last one took, so that long records never hold the others for long', async () => {
    // A clock of the test's: looking at a record costs `cost` ms (a filter on created_at walks an
    // order's items first: tens of KB read per record at most). The first window has no pace to go by.
    const run = async (cost: number, n: number, match: (i: number) => boolean) => {
      const rows = table(n, match)
      const s = statements(rows)
      let t = 0
      const sizes: number[] = []
      const took: number[] = []
      let since = 0
      const read: typeof s.read = async (after, k, floor) => {
        const before = s.seen.read
        const got = await s.read(after, k, floor)
        t += (s.seen.read - before) * cost
        return got
      }
      const windows: WindowFloor = async (after, k) => {
        if (sizes.length > 0) took.push(t - since)
        sizes.push(k)
        since = t
        return s.windows(after, k)
      }
      const ids: string[] = []
      let cursor: string | undefined
      for (;;) {
        const page = toPage(await readPageRows(20, cursor, read, windows, () => t), 20, (r) => r)
        ids.push(...page.data.map((r) => r.id))
        if (!page.next_cursor) break
        cursor = JSON.parse(Buffer.from(page.next_cursor, 'base64url').toString()).after
      }
      assert.deepEqual(ids, rows.filter((r) => r.match).map((r) => r.id))
      return { sizes, took }
    }
    // 40 µs a record: a window of 16,000 would take 640 ms.
    const slow = await run(0.04, SCAN_BUDGET + 30_000, (i) => i % 997 === 0)
    assert.equal(slow.took[0], 1_000 * 0.04, 'the first window of a page: 1,000 records')
    for (const [i, ms] of slow.took.entries()) {
      if (slow.sizes[i] !== 1_000) assert.ok(ms <= WINDOW_MS * 2, `window ${i} of ${slow.sizes[i]} records took ${ms} ms`)
    }
    // A record that costs nothing measurable: windows double up to 16,000, as before.
    const fast = await run(0, SCAN_BUDGET + 30_000, (i) => i % 997 === 0)
    assert.deepEqual(fast.sizes.slice(0, 5), [1_000, 2_000, 4_000, 8_000, 16_000])
    // Records so long that even the least window takes longer than WINDOW_MS: it stays at the least, and paging goes on.
    const slowest = await run(1, 30_000, (i) => i % 4_999 === 0)
    assert.ok(Math.min(...slowest.sizes) >= 100 && slowest.sizes.slice(1).every((k) => k <= 1_000), `windows ${slowest.sizes}`)
  })

  it('reads without windows as before: one query for a served filter', async () => {
    const rows = table(5_000, (i) => i % 2 === 0)
    const s = statements(rows)
    const got = await readPageRows(20, undefined, (after, n) => s.read(after, n))
    assert.equal(got.length, 21)
    assert.equal(got.resume, undefined)
    assert.equal(s.seen.counted, 0)
  })

  it('stops reading once the rows hold a page of UTF-8 bytes, counting a long text by its bytes, not its characters', async () => {
    // Ten records of 150,000 three-byte characters are 4.5 MB of JSON, past a page (4 MiB), in 1.5 M
    // characters: counted in characters the page read two more parts of ten that it could not show.
    const big = (i: number) => ({ id: `r${String(1000 - i).padStart(4, '0')}`, body: '€'.repeat(150_000) })
    const rows = Array.from({ length: 100 }, (_, i) => big(i))
    let parts = 0
    const got = await readPageRows(100, undefined, async (after, n) => {
      parts++
      return rows.filter((r) => after === undefined || r.id < after).slice(0, n)
    })
    assert.equal(parts, 1, 'one part of ten rows')
    assert.equal(got.length, 10)
    const page = toPage(got, 100, (r) => r)
    assert.equal(page.data.length, 9, 'nine of them fit in a page')
    assert.equal(page.has_more, true)
  })

  it('renders one large page a turn of the event loop: a timer due meanwhile runs after the first, not after all of them', async () => {
    const rows = Array.from({ length: 10 }, (_, i) => ({ id: `r${String(1000 - i).padStart(4, '0')}`, body: '€'.repeat(150_000) }))
    const read = async (_after: string | undefined, n: number) => rows.slice(0, n)
    // The turn an earlier test's large page took is over once a small list has gone (it waits for
    // that turn); a sleep alone was not enough under load, where the sleep's timer could fire between
    // that turn's two hops and the pages below waited behind it. The timer below is then set from the
    // timers phase, so the first page's immediate comes before the timer can run.
    await readPageRows(20, undefined, async () => [])
    await new Promise((r) => setTimeout(r, 1))
    const order: string[] = []
    setTimeout(() => order.push('timer'), 0)
    // Five clients' lists in one turn, each from a callback of its own as a request is: the first
    // reads and renders, the others wait for later turns, and the event loop goes round between.
    await Promise.all(Array.from({ length: 5 }, (_, i) => new Promise<void>((done, fail) => setImmediate(() => {
      readPageRows(100, undefined, read).then((rows) => {
        assert.equal(toPage(rows, 100, (r) => r).data.length, 9)
        order.push(`page ${i}`)
      }).then(done, fail)
    }))))
    assert.deepEqual(order, ['page 0', 'timer', 'page 1', 'page 2', 'page 3', 'page 4'])
    // A small list that starts while a large page has the turn waits for the next one; with none, it does not wait.
    const small = async () => (await readPageRows(20, undefined, async (_a, n) => [{ id: 'a' }].slice(0, n))).length
    toPage(await readPageRows(100, undefined, read), 100, (r) => r)
    const steps: string[] = []
    setImmediate(() => steps.push('immediate'))
    steps.push(`small ${await small()}`)
    assert.deepEqual(steps, ['immediate', 'small 1'])
    await new Promise((r) => setTimeout(r, 5))
    const quick: string[] = []
    setImmediate(() => quick.push('immediate'))
    quick.push(`small ${await small()}`)
    assert.deepEqual(quick, ['small 1'], 'answered before the event loop went round')
  })
})
