import * as v from 'valibot'
import { PAGE_BYTES } from '../db/page-rows.ts'

export interface Page<T> {
  data: T[]
  has_more: boolean
  next_cursor: string | null
}

/** Query fields every list accepts: `limit` 1–100 (default 20) and an opaque `cursor`. */
export const pageQuery = {
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,3}$/, 'must be a whole number from 1 to 100'),
      v.description('Page size, 1–100'),
      v.transform(Number),
      v.minValue(1, 'must be a whole number from 1 to 100'),
      v.maxValue(100, 'must be a whole number from 1 to 100'),
    ),
    '20',
  ),
  cursor: v.optional(
    v.pipe(
      v.string(),
      v.description('Opaque; the `next_cursor` of the previous page'),
      v.transform(_decodeCursor),
      v.string('is not a valid cursor'),
    ),
  ),
}

/** The cursor is the id of the last record shown; ids are unique and ordered, so keyset paging neither repeats nor skips. */
export function encodeCursor(id: string): string {
  return Buffer.from(JSON.stringify({ after: id })).toString('base64url')
}

function _decodeCursor(s: string): string | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'))
    if (parsed && typeof parsed === 'object' && 'after' in parsed && typeof parsed.after === 'string' && parsed.after.length < 100) {
      return parsed.after
    }
  } catch {}
  return null
}

export { PAGE_BYTES }
/** Room kept for the envelope around the records (`has_more`, `next_cursor`). */
const _ENVELOPE_BYTES = 256
const _rendered = new WeakMap<object, string>()

/**
 * Rows fetched with `limit + 1`, newest first → one page of at most `limit` records and at most
 * PAGE_BYTES of JSON: when the next record would cross that, the page ends there with
 * `has_more: true` and a cursor that continues exactly after the last record shown. Records
 * are mapped and serialised one at a time, so the rest of an oversized batch is never built;
 * the page's JSON is kept for pageJson().
 */
export function toPage<R extends { id: string }, T>(rows: R[], limit: number, map: (row: R) => T): Page<T> {
  const data: T[] = []
  const parts: string[] = []
  let bytes = _ENVELOPE_BYTES
  let cut = false
  const n = Math.min(rows.length, limit)
  for (let i = 0; i < n; i++) {
    const item = map(rows[i]!)
    const json = JSON.stringify(item)
    const size = Buffer.byteLength(json) + 1
    if (data.length > 0 && bytes + size > PAGE_BYTES) {
      cut = true
      break
    }
    bytes += size
    data.push(item)
    parts.push(json)
  }
  const has_more = cut || rows.length > limit
  const last = has_more ? rows[data.length - 1] : undefined
  const page: Page<T> = { data, has_more, next_cursor: last ? encodeCursor(last.id) : null }
  _rendered.set(page, `{"data":[${parts.join(',')}],"has_more":${has_more},"next_cursor":${JSON.stringify(page.next_cursor)}}`)
  return page
}

/** The JSON of a page: as toPage() rendered it, if the handler returned that page unchanged. */
export function pageJson(page: object): string {
  return _rendered.get(page) ?? JSON.stringify(page)
}
