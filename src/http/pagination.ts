import * as v from 'valibot'

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

/** Rows fetched with `limit + 1`, newest first → one page. */
export function toPage<R extends { id: string }, T>(rows: R[], limit: number, map: (row: R) => T): Page<T> {
  const has_more = rows.length > limit
  const shown = has_more ? rows.slice(0, limit) : rows
  const last = shown[shown.length - 1]
  return { data: shown.map(map), has_more, next_cursor: has_more && last ? encodeCursor(last.id) : null }
}
