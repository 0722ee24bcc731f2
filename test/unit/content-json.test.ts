import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import type { ContentRow } from '../../src/db/schema.ts'
import { pageJson, toPage } from '../../src/http/pagination.ts'
import { contentJson, toContent } from '../../src/modules/content/service.ts'
import { toMetadataJson } from '../../src/modules/fields.ts'

// Rows as createContent()/updateContent() write them: `data` as JSON.stringify of the object
// given, metadata through toMetadataJson() (sorted keys, NULL when empty), `body` text or NULL.
const text = fc.string({ unit: 'grapheme', maxLength: 12 })
const anyText = fc.oneof(text, fc.string({ unit: 'binary', maxLength: 12 }), fc.constantFrom('"', '\\', '\u2028', '€', '</script>', '__proto__'))
const key = fc.oneof(anyText, fc.nat().map(String), fc.constantFrom('x\\', 'x\u00e9', 'x\n', '__proto__'))
const data = fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 })
const row = fc.record({
  id: fc.uuid().map((u) => `cnt_${u}`),
  tenant_id: fc.constant('ten_x'),
  entity: fc.constantFrom('pages', 'blog-posts', 'faq'),
  slug: anyText,
  title: anyText,
  body: fc.option(fc.oneof(anyText, fc.string({ unit: 'grapheme', maxLength: 200 })), { nil: null }),
  data: data.map((d) => JSON.stringify(d)),
  status: fc.constantFrom('draft', 'published', 'archived'),
  metadata: fc.option(fc.dictionary(fc.oneof(anyText, fc.nat().map(String)), anyText, { maxKeys: 6 }), { nil: null }).map(toMetadataJson),
  created_at: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  updated_at: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
}) as fc.Arbitrary<ContentRow>

describe('contentJson', () => {
  it('is JSON.stringify(toContent(row)) byte for byte, in pieces, for rows as the service writes them', () => {
    fc.assert(fc.property(row, (r) => {
      assert.equal(contentJson(r).join(''), JSON.stringify(toContent(r)))
    }), { numRuns: 3000 })
  })
})

describe('toPage with a renderer in pieces', () => {
  const same = (rows: ContentRow[], limit: number) => {
    let mapped = 0
    const rendered = toPage(rows, limit, (r: ContentRow) => (mapped++, toContent(r)), contentJson)
    const plain = toPage(rows, limit, toContent)
    assert.equal(mapped, 0, 'the records were not mapped to objects')
    assert.deepEqual(pageJson(rendered), pageJson(plain))
    assert.equal(rendered.has_more, plain.has_more)
    assert.equal(rendered.next_cursor, plain.next_cursor)
    assert.deepEqual(rendered.data, plain.data)
    return rendered
  }

  it('renders the same small pages as mapping each row', () => {
    fc.assert(fc.property(fc.array(row, { maxLength: 25 }), fc.integer({ min: 1, max: 20 }), (rows, limit) => {
      same(rows, limit)
    }), { numRuns: 300 })
  })

  it('renders the same large pages, as bytes, and ends them at the same record', () => {
    // Bodies of three-byte characters: the page passes 64 K characters (kept as bytes) and then 4 MiB.
    const base = fc.sample(row, 40)
    for (const [chars, n] of [[1_000, 30], [30_000, 20], [100_000, 20], [150_000, 12]] as const) {
      const rows = base.slice(0, n).map((r, i) => ({ ...r, id: `cnt_${String(99 - i).padStart(3, '0')}`, body: `${'€'.repeat(chars)}"\\${i}` }))
      const page = same(rows, 100)
      assert.equal(Buffer.isBuffer(pageJson(page)), chars >= 30_000)
      if (chars >= 100_000) assert.equal(page.has_more, true, 'the page ended by size')
    }
  })
})
