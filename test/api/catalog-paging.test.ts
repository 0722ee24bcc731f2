import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { listAll } from '../helpers/catalog.ts'

/**
 * Keyset paging newest first: walking a list while records are added never repeats or
 * skips a record that existed at the start, and filters keep holding across pages.
 */
const families = [
  { path: '/v1/customers', body: (i: number) => ({ firstName: `F${i}`, lastName: 'L', email: `c${i}@example.com` }) },
  { path: '/v1/products', body: (i: number) => ({ name: `P${i}`, price: i + 0.25, currency: 'EUR', active: i % 3 !== 0 }) },
]

describe('catalog paging', () => {
  let app: TestApp
  let t: TestTenant
  let other: TestTenant
  before(async () => {
    app = await startTestApp()
    t = await app.tenant('Pager')
    other = await app.tenant('Other')
  })
  after(() => app.close())

  for (const fam of families) {
    test(`${fam.path}: 47 records in pages of 10 while 15 more are added`, async () => {
      const created: string[] = []
      for (let i = 0; i < 47; i++) {
        const r = await t.request('POST', fam.path, { body: fam.body(i) })
        assert.equal(r.status, 201, r.text)
        created.push(r.body.data.id)
        await other.request('POST', fam.path, { body: fam.body(i) }) // interleaved records of another tenant
      }
      const seen: string[] = []
      const added: string[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const r = await t.request('GET', `${fam.path}?limit=10${cursor ? `&cursor=${cursor}` : ''}`)
        assert.equal(r.status, 200, r.text)
        assert.ok(r.body.data.length <= 10)
        assert.equal(r.body.has_more, r.body.next_cursor !== null)
        seen.push(...r.body.data.map((x: { id: string }) => x.id))
        cursor = r.body.next_cursor
        pages++
        for (let k = 0; k < 3; k++) {
          const n = await t.request('POST', fam.path, { body: fam.body(100 + pages * 3 + k) })
          added.push(n.body.data.id)
        }
      } while (cursor)
      assert.equal(pages, 5)
      assert.equal(new Set(seen).size, seen.length, 'no record twice')
      assert.deepEqual(seen, [...created].reverse(), 'every original record, newest first, none skipped')
      assert.ok(!seen.some((id) => added.includes(id)), 'records added after the first page sort before the cursor')
      const fresh = await t.request('GET', `${fam.path}?limit=3`)
      assert.deepEqual(fresh.body.data.map((x: { id: string }) => x.id), added.slice(-3).reverse(), 'a new walk starts with the newest')
    })
  }

  test('/v1/products?active=false across pages holds exactly the inactive ones', async () => {
    const all = await listAll((p) => t.request('GET', p), '/v1/products')
    const inactive = await listAll((p) => t.request('GET', p), '/v1/products?active=false', 4)
    assert.ok(inactive.length >= 16)
    assert.deepEqual(inactive.map((p) => p.id), all.filter((p) => !p.active).map((p) => p.id))
    const active = await listAll((p) => t.request('GET', p), '/v1/products?active=true', 7)
    assert.equal(active.length + inactive.length, all.length)
  })

  test("the other tenant's walk holds exactly its own records", async () => {
    for (const fam of families) {
      const mine = new Set((await listAll((p) => t.request('GET', p), fam.path, 9)).map((x) => x.id))
      const theirs = await listAll((p) => other.request('GET', p), fam.path, 9)
      assert.equal(theirs.length, 47)
      assert.ok(theirs.every((x) => !mine.has(x.id)))
    }
  })
})
