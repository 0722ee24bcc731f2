import * as v from 'valibot'
import { LARGE_PAGE_BYTES, PAGE_BYTES, tookLargeTurn, type PageRows } from '../db/page-rows.ts'
import type { IdPrefix } from '../lib/ids.ts'

export interface Page<T> {
  data: T[]
  has_more: boolean
  next_cursor: string | null
}

/**
 * Query fields every list accepts: `limit` 1–100 (default 20) and an opaque `cursor`, which must
 * be exactly what a page of this list writes (docs/decisions/0043-cursors-by-shape.md): anything
 * else, forged or damaged, is a 400. `prefix`: the id prefix of the list's records.
 */
export function pageQueryFor(prefix?: IdPrefix) {
  return {
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
        v.transform((s: string) => decodeCursor(s, prefix)),
        v.string('is not a valid cursor: give the next_cursor of a page of this list as it is'),
      ),
    ),
  }
}

/** The page fields of a list whose record prefix is not known (typing and the OpenAPI document). */
export const pageQuery = pageQueryFor()

/** The cursor is the id of the last record shown; ids are unique and ordered, so keyset paging neither repeats nor skips. */
export function encodeCursor(id: string): string {
  return Buffer.from(`{"after":${JSON.stringify(id)}}`).toString('base64url')
}

// What encodeCursor() writes for an id (`<prefix>_<uuid>`, lower-case hex): 51–52 bytes.
const _CURSOR_TEXT = /^\{"after":"([a-z]{2,3})_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"\}$/

/**
 * The id a cursor names, or null unless the cursor is exactly encodeCursor() of an id of this
 * list (`prefix`, when given): canonical base64url of `{"after":"<id>"}`, nothing more.
 */
export function decodeCursor(s: string, prefix?: IdPrefix): string | null {
  // Canonical base64url of 51 or 52 bytes (Buffer would skip stray characters and unused bits).
  if (!_CURSOR_B64.test(s)) return null
  const text = Buffer.from(s, 'base64url').toString('latin1')
  const m = _CURSOR_TEXT.exec(text)
  if (m === null || (prefix !== undefined && m[1] !== prefix)) return null
  return text.slice(10, -2)
}

// 68 characters hold 51 bytes (`wh_…`) exactly; 70 hold 52 (`ord_…`), the last one's low 4 bits unused and zero.
const _CURSOR_B64 = /^[A-Za-z0-9_-]{68}(?:[A-Za-z0-9_-][AQgw])?$/

export { PAGE_BYTES }
/** Room kept for the envelope around the records (`has_more`, `next_cursor`). */
const _ENVELOPE_BYTES = 256
const _rendered = new WeakMap<object, string | Buffer>()
/** A page past this many characters is rendered as UTF-8 bytes straight away (no joined string). */
const _BYTES_PAST = 64 * 1024

/**
 * Rows fetched with `limit + 1`, newest first → one page of at most `limit` records and at most
 * PAGE_BYTES of JSON: when the next record would cross that, the page ends there with
 * `has_more: true` and a cursor that continues exactly after the last record shown. Records
 * are mapped and serialised one at a time, so the rest of an oversized batch is never built;
 * the page's JSON is kept for pageJson() — as bytes when it is large, so a big page is never
 * held as one (possibly two-byte) string as well.
 *
 * `json`, when given, renders a row's record straight to its JSON (what `JSON.stringify(map(row))`
 * gives, without the object): the page's `data` is then mapped only if something reads it. It may
 * give the JSON in pieces that join to it (a large text apart): each piece is then encoded on its
 * own, and no record is ever joined into one string.
 */
export function toPage<R extends { id: string }, T>(rows: PageRows<R>, limit: number, map: (row: R) => T, json?: (row: R) => string | string[]): Page<T> {
  const pieces: (string | Buffer)[] = []
  // Until the page could pass LARGE_PAGE_BYTES, `bytes` is an upper bound (three bytes a UTF-16
  // unit), so a page of ordinary records is never counted byte by byte; past it, the pieces
  // so far are counted once and every record after them exactly.
  let bytes = _ENVELOPE_BYTES
  let exact = false
  let chars = 0
  let cut = false
  let shown = 0
  const data: T[] = []
  const n = Math.min(rows.length, limit)
  for (; shown < n; shown++) {
    const row = rows[shown]!
    const item = json ? undefined : map(row)
    const text = json ? json(row) : JSON.stringify(item)
    // Past _BYTES_PAST characters the page is kept as UTF-8 bytes: each text encoded once.
    let length = 0
    let encoded: string | Buffer | (string | Buffer)[]
    if (typeof text === 'string') {
      length = text.length
      encoded = chars + length > _BYTES_PAST ? Buffer.from(text) : text
    } else {
      for (const piece of text) length += piece.length
      encoded = chars + length > _BYTES_PAST ? text.map((piece) => Buffer.from(piece)) : text
    }
    if (!exact && bytes + 3 * length + 1 > LARGE_PAGE_BYTES) {
      exact = true
      bytes = _ENVELOPE_BYTES + (shown > 0 ? 1 + _byteLength(pieces) : 0)
    }
    const size = 1 + (exact ? _byteLength(Array.isArray(encoded) ? encoded : [encoded]) : 3 * length)
    if (shown > 0 && bytes + size > PAGE_BYTES) {
      cut = true
      break
    }
    bytes += size
    chars += length
    if (!json) data.push(item!)
    if (shown > 0) pieces.push(',')
    if (Array.isArray(encoded)) for (const piece of encoded) pieces.push(piece)
    else pieces.push(encoded)
  }
  // A page that stopped at the scan budget (db/page-rows.ts) goes on below the last record looked at.
  const resume = !cut && rows.length <= limit ? rows.resume : undefined
  const has_more = cut || rows.length > limit || resume !== undefined
  const next_cursor = resume !== undefined ? encodeCursor(resume) : has_more ? encodeCursor(rows[shown - 1]!.id) : null
  const page: Page<T> = json ? new _RenderedPage(rows, shown, map, has_more, next_cursor) : { data, has_more, next_cursor }
  const tail = `],"has_more":${has_more},"next_cursor":${JSON.stringify(next_cursor)}}`
  if (chars <= _BYTES_PAST) _rendered.set(page, `{"data":[${pieces.join('')}${tail}`)
  else _rendered.set(page, Buffer.concat([Buffer.from('{"data":['), ...pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)), Buffer.from(tail)]))
  if (bytes > LARGE_PAGE_BYTES) tookLargeTurn() // other large pages wait for the next turn of the event loop (db/page-rows.ts)
  return page
}

function _byteLength(pieces: readonly (string | Buffer)[]): number {
  let n = 0
  for (const piece of pieces) n += typeof piece === 'string' ? Buffer.byteLength(piece) : piece.length
  return n
}

/** A page rendered from its rows: `data` is their records, mapped when first read (a getter on the prototype: no closure per page). */
class _RenderedPage<R, T> implements Page<T> {
  #data: T[] | undefined
  private readonly _rows: R[]
  private readonly _shown: number
  private readonly _map: (row: R) => T
  readonly has_more: boolean
  readonly next_cursor: string | null

  constructor(rows: R[], shown: number, map: (row: R) => T, hasMore: boolean, nextCursor: string | null) {
    this._rows = rows
    this._shown = shown
    this._map = map
    this.has_more = hasMore
    this.next_cursor = nextCursor
  }

  get data(): T[] {
    return (this.#data ??= this._rows.slice(0, this._shown).map(this._map))
  }

  toJSON(): { data: T[]; has_more: boolean; next_cursor: string | null } {
    return { data: this.data, has_more: this.has_more, next_cursor: this.next_cursor }
  }
}

/** The JSON of a page (text, or UTF-8 bytes for a large one): as toPage() rendered it, if the handler returned that page unchanged. */
export function pageJson(page: object): string | Buffer {
  return _rendered.get(page) ?? JSON.stringify(page)
}
