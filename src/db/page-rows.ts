/** A page's JSON is at most this many bytes (CONTRACT §9); one record alone always fits. */
export const PAGE_BYTES = 4 * 1024 * 1024

/** Rows per query when a page is read in parts; a default page (limit 20) is one query. */
const _CHUNK = 10
/** A first read of up to this many rows is made whole (a default page is one query). */
const _FIRST = 21

/**
 * The rows of one page, newest first: `limit + 1` rows (so the caller knows whether more
 * follow), read in parts of 10 that stop early once the rows read already hold more than a
 * page's bytes — then the page will end by size (http/pagination.ts toPage) before the rows
 * not read, so reading them would only cost memory and time. The size counted (characters of
 * the text columns) never exceeds the JSON the rows become.
 */
export async function readPageRows<R extends { id: string }>(
  limit: number, after: string | undefined, read: (after: string | undefined, n: number) => Promise<R[]>,
): Promise<R[]> {
  const rows: R[] = []
  let bytes = 0
  let cursor = after
  for (;;) {
    const want = limit + 1 - rows.length
    const n = rows.length === 0 && want <= _FIRST ? want : Math.min(want, _CHUNK)
    const part = await read(cursor, n)
    rows.push(...part)
    if (part.length < n || rows.length > limit) return rows
    for (const row of part) bytes += _size(row)
    if (bytes > PAGE_BYTES) return rows
    cursor = part[part.length - 1]!.id
  }
}

function _size(row: object): number {
  let n = 0
  for (const value of Object.values(row)) n += typeof value === 'string' ? value.length : 8
  return n
}
