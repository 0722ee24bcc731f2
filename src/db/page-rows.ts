/** A page's JSON is at most this many bytes (CONTRACT §9); one record alone always fits. */
export const PAGE_BYTES = 4 * 1024 * 1024

/** A text column this long is counted in UTF-8 bytes (up to three a character); shorter ones in characters, which never exceed their bytes. */
const _EXACT_PAST = 1024

/** Rows per query when a page is read in parts; a default page (limit 20) is one query. */
const _CHUNK = 10
/** A first read of up to this many rows is made whole (a default page is one query). */
const _FIRST = 21

/**
 * At most this many of a tenant's records are looked at for one page of a list whose filters no
 * index serves in id order (a time range, a delivery's status, two filters at once): when the page
 * is not full by then, it ends with what it found, `has_more: true` and a cursor past what was
 * looked at (docs/decisions/0003-filtered-page-budget.md): 40–90 ms of SQLite's time at most, measured at a million orders
 * or deliveries, where such a list held every other tenant's requests for 0.3–0.8 s before.
 */
export const SCAN_BUDGET = 100_000
/**
 * The first window of records looked at, and the largest: windows double from one to the other,
 * and other requests run between two — as long as a window's reads take under WINDOW_MS.
 */
const _WINDOW_FIRST = 1_000
const _WINDOW_MOST = 16_000
/**
 * What one window's reads should take at most. A filter reads each record of the window (a time
 * range compares `created_at`, stored after an order's items): with near-maximal records (tens of
 * KB each) a window of 16,000 took SQLite 120–160 ms, which held every other request. So the next
 * window is sized by how long the last one took, down to _WINDOW_LEAST records.
 */
export const WINDOW_MS = 10
const _WINDOW_LEAST = 250

/** Rows read for one page, newest first. `resume`: the page stopped at the scan budget; the next one reads ids below this. */
export type PageRows<R> = R[] & { resume?: string }

/**
 * The id `k` records below `after` (from the newest when undefined) of the records a list's
 * windows count — the tenant's rows of the table, in id order by an index — or undefined when
 * fewer than `k` are left.
 */
export type WindowFloor = (after: string | undefined, k: number) => Promise<string | undefined>

/**
 * The rows of one page, newest first: `limit + 1` rows (so the caller knows whether more
 * follow), read in parts of 10 that stop early once the rows read already hold more than a
 * page's bytes — then the page will end by size (http/pagination.ts toPage) before the rows
 * not read, so reading them would only cost memory and time. The size counted never exceeds
 * the JSON the rows become, and comes close to it for large rows: a long text column by its
 * UTF-8 bytes, a short one by its characters. (Counting characters alone, ten records of three-byte
 * characters that fill a page read two more parts of ten it could not show.)
 *
 * With `windows` (a list whose filters no index serves in id order), every read is bounded
 * below by a floor (`read`'s third argument: only ids ≥ floor) so that no query looks at more than
 * one window of records, and the page stops after SCAN_BUDGET records (`resume`). `now` (ms) times
 * each window's reads, which size the next window.
 */
export async function readPageRows<R extends { id: string }>(
  limit: number, after: string | undefined, read: (after: string | undefined, n: number, floor?: string) => Promise<R[]>,
  windows?: WindowFloor, now: () => number = performance.now.bind(performance),
): Promise<PageRows<R>> {
  if (_turns.taken) await _nextTurn()
  const rows: PageRows<R> = []
  let bytes = 0
  let cursor = after
  let size = _WINDOW_FIRST
  let counted = size
  let floor = windows ? await windows(cursor, size) : undefined
  let started = windows ? now() : 0
  for (;;) {
    const want = limit + 1 - rows.length
    const n = rows.length === 0 && want <= _FIRST ? want : Math.min(want, _CHUNK)
    const part = await read(cursor, n, floor)
    rows.push(...part)
    if (rows.length > limit) return _done(rows)
    for (const row of part) bytes += _size(row)
    if (bytes > PAGE_BYTES) return _done(rows)
    if (part.length === n) {
      cursor = part[part.length - 1]!.id
      continue
    }
    // This window, or the list, is read to its end.
    if (!windows || floor === undefined) return _done(rows)
    if (counted >= SCAN_BUDGET) {
      rows.resume = floor
      return _done(rows)
    }
    cursor = floor
    const took = now() - started
    await new Promise((resolve) => setImmediate(resolve))
    size = Math.min(_nextWindow(size, took), SCAN_BUDGET - counted)
    counted += size
    floor = await windows(cursor, size)
    started = now()
  }
}

/** The next window after one of `size` records whose reads took `took` ms: twice as many, or as many as WINDOW_MS would read at that pace. */
function _nextWindow(size: number, took: number): number {
  const paced = took > 0 ? Math.floor((size * WINDOW_MS) / took) : Infinity
  return Math.max(_WINDOW_LEAST, Math.min(size * 2, paced, _WINDOW_MOST))
}

/**
 * Large pages take turns. Rendering a page of up to 4 MiB takes the one thread 10–30 ms; forty
 * clients asking for such pages at once held every other request — /health too (CONTRACT §9:
 * within 1 s meanwhile) — until all forty were rendered: 1.1 s once on SQLite, where a list's
 * reads and its rendering run in one go, and up to 0.4 s on PostgreSQL, where a connection's
 * rows arrive together with others'. So once a page past LARGE_PAGE_BYTES has been rendered
 * (http/pagination.ts toPage() says so), the rest of that turn of the event loop is its own: a
 * list that starts meanwhile waits before its first read (holding nothing), and one whose rows
 * arrive meanwhile and make a large page waits before it is rendered; they go on one a turn, in
 * order, each after the event loop has polled its sockets again. Every other route is never
 * held, and a list that comes while no large page is being rendered does not wait at all.
 * (http/execute.ts's turns come on top once a route has answered a large page: for 10 s its lists
 * then run two at a time, which bounds how many large pages are read at once — memory. They
 * cannot see the first wave of such lists, before any was answered: these turns do.)
 */
export const LARGE_PAGE_BYTES = 1024 * 1024

const _turns = { taken: false, scheduled: false, waiting: [] as (() => void)[] }

/** http/pagination.ts: a page past LARGE_PAGE_BYTES has just been rendered; other lists wait for the next turn. */
export function tookLargeTurn(): void {
  _turns.taken = true
  _schedule()
}

function _nextTurn(): Promise<void> {
  _schedule()
  return new Promise((resolve) => _turns.waiting.push(resolve))
}

/** The next turn; two hops, so that the event loop polls its sockets in between whichever phase this is called from. */
function _schedule(): void {
  if (_turns.scheduled) return
  _turns.scheduled = true
  setImmediate(_hop)
}

const _hop = () => setImmediate(_release)

/** A new turn: the first list waiting goes on (it may take the turn), the rest wait for the next one. */
function _release(): void {
  _turns.scheduled = false
  _turns.taken = false
  _turns.waiting.shift()?.()
  if (_turns.waiting.length > 0) _schedule()
}

/** Rows read while another large page has the turn wait for the next one if they make a large page too. */
function _done<R extends object>(rows: PageRows<R>): PageRows<R> | Promise<PageRows<R>> {
  if (!_turns.taken) return rows
  let bytes = 0
  for (const row of rows) bytes += _size(row)
  return bytes > LARGE_PAGE_BYTES ? _nextTurn().then(() => rows) : rows
}

function _size(row: object): number {
  let n = 0
  for (const value of Object.values(row)) n += typeof value !== 'string' ? 8 : value.length < _EXACT_PAST ? value.length : Buffer.byteLength(value)
  return n
}
