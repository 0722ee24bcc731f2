import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { PAGE_BYTES, pageJson, toPage } from '../../src/http/pagination.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { bigContent } from '../helpers/big-content.ts'

/** §9 Response size: a page holds at most `limit` records and at most 4 MiB of JSON. */
describe('pages bounded in bytes', () => {
  let app: TestApp
  before(async () => {
    app = await startTestApp()
  })
  after(() => app.close())

  test('a page of large records ends before 4 MiB with has_more, and its cursor continues exactly there', async () => {
    const t = await app.tenant()
    const ids: string[] = []
    for (let i = 0; i < 12; i++) {
      const r = await t.request('POST', '/v1/content/pages', { body: bigContent(i) })
      assert.equal(r.status, 201, r.text)
      ids.unshift(r.body.data.id)
    }
    const seen: string[] = []
    let path = '/v1/content/pages?limit=100'
    for (;;) {
      const r = await t.request('GET', path)
      assert.equal(r.status, 200)
      const bytes = Buffer.byteLength(r.text)
      assert.ok(bytes <= PAGE_BYTES, `page of ${bytes} bytes`)
      assert.ok(r.body.data.length >= 1)
      seen.push(...r.body.data.map((c: { id: string }) => c.id))
      if (!r.body.has_more) break
      // Full by bytes: one more record would have crossed the bound.
      assert.ok(bytes + Buffer.byteLength(JSON.stringify(r.body.data[0])) > PAGE_BYTES, 'the page was cut only when the next record would not fit')
      path = `/v1/content/pages?limit=100&cursor=${r.body.next_cursor}`
    }
    assert.deepEqual(seen, ids, 'every record once, newest first')
    assert.ok(seen.length > 7, 'more than one page')
  })

  test('one record alone always fits, and `limit` still bounds a page of small records', () => {
    const huge = Array.from({ length: 3 }, (_, i) => ({ id: `r${3 - i}`, blob: 'y'.repeat(PAGE_BYTES + 10) }))
    const page = toPage(huge, 100, (r) => r)
    assert.equal(page.data.length, 1)
    assert.equal(page.has_more, true)
    assert.deepEqual(JSON.parse(String(pageJson(page))), page)
    const small = Array.from({ length: 6 }, (_, i) => ({ id: `s${6 - i}` }))
    const limited = toPage(small, 5, (r) => r)
    assert.equal(limited.data.length, 5)
    assert.equal(limited.has_more, true)
    assert.equal(JSON.stringify(JSON.parse(String(pageJson(limited)))), String(pageJson(limited)))
    const all = toPage(small, 20, (r) => r)
    assert.deepEqual(JSON.parse(String(pageJson(all))), { data: small, has_more: false, next_cursor: null })
  })
})
