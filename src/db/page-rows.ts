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
 * looked at (README "Decisions"): 40–90 ms of SQLite's time at most, measured at a million orders
 * or deliveries, where such a list held every other tenant's requests for 0.3–0.8 s before.
 */
export const SCAN_BUDGET = 100_000
/** The first window of records looked at, and the largest: windows double from one to the other, and other requests run between two. */
const _WINDOW_FIRST = 1_000
const _WINDOW_MOST = 16_000

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
 * one window of records, and the page stops after SCAN_BUDGET records (`resume`).
 */
export async function readPageRows<R extends { id: string }>(
  limit: number, after: string | undefined, read: (after: string | undefined, n: number, floor?: string) => Promise<R[]>,
  windows?: WindowFloor,
): Promise<PageRows<R>> {
  const rows: PageRows<R> = []
  let bytes = 0
  let cursor = after
  let size = _WINDOW_FIRST
  let counted = size
  let floor = windows ? await windows(cursor, size) : undefined
  for (;;) {
    const want = limit + 1 - rows.length
    const n = rows.length === 0 && want <= _FIRST ? want : Math.min(want, _CHUNK)
    const part = await read(cursor, n, floor)
    rows.push(...part)
    if (rows.length > limit) return rows
    for (const row of part) bytes += _size(row)
    if (bytes > PAGE_BYTES) return rows
    if (part.length === n) {
      cursor = part[part.length - 1]!.id
      continue
    }
    // This window, or the list, is read to its end.
    if (!windows || floor === undefined) return rows
    if (counted >= SCAN_BUDGET) {
      rows.resume = floor
      return rows
    }
    cursor = floor
    await new Promise((resolve) => setImmediate(resolve))
    size = Math.min(size * 2, _WINDOW_MOST, SCAN_BUDGET - counted)
    counted += size
    floor = await windows(cursor, size)
  }
}

function _size(row: object): number {
  let n = 0
  for (const value of Object.values(row)) n += typeof value !== 'string' ? 8 : value.length < _EXACT_PAST ? value.length : Buffer.byteLength(value)
  return n
}
