import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { create, invoiceBody, itineraryBody, paymentBody } from '../helpers/billing.ts'

/** Keyset paging, newest first: no record that existed at the start is repeated or skipped, even while records are added. */
describe('billing list paging', () => {
  let app: TestApp
  let other: TestTenant
  before(async () => {
    app = await startTestApp()
    other = await app.tenant('Other')
  })
  after(() => app.close())

  async function pageThrough(t: TestTenant, path: string, limit: number, between: () => Promise<unknown>): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const r = await t.request('GET', `${path}${path.includes('?') ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)
      assert.equal(r.status, 200, r.text)
      assert.ok(r.body.data.length <= limit)
      assert.equal(r.body.has_more, r.body.next_cursor !== null)
      ids.push(...r.body.data.map((x: { id: string }) => x.id))
      cursor = r.body.next_cursor
      pages++
      await between()
    } while (cursor)
    return { ids, pages }
  }

  test('47 payments in pages of 10 while more are recorded', async () => {
    const t = await app.tenant()
    const made: string[] = []
    for (let i = 0; i < 47; i++) made.push((await create(t, '/v1/payments', paymentBody({ amount: i + 1 }))).id)
    await create(other, '/v1/payments', paymentBody())
    const added: string[] = []
    const { ids, pages } = await pageThrough(t, '/v1/payments', 10, async () => {
      added.push((await create(t, '/v1/payments', paymentBody({ amount: 0.01 }))).id)
      await create(other, '/v1/payments', paymentBody())
    })
    assert.equal(pages, 5)
    assert.deepEqual(ids, [...made].reverse(), 'every original payment once, newest first')
    assert.equal(new Set(ids).size, ids.length)
    for (const id of added) assert.ok(!ids.includes(id))
    const first = await t.request('GET', '/v1/payments?limit=5')
    assert.deepEqual(first.body.data.map((p: any) => p.id), [...added].reverse())
  })

  test('a filtered list pages the same way (invoiceId)', async () => {
    const t = await app.tenant()
    const inv = await create(t, '/v1/invoices', invoiceBody({ lines: [{ description: 'Tour', quantity: 1, unitPrice: 1000 }] }))
    const made: string[] = []
    for (let i = 0; i < 23; i++) {
      made.push((await create(t, '/v1/payments', paymentBody({ amount: 1, invoiceId: inv.id }))).id)
      await create(t, '/v1/payments', paymentBody({ amount: 1 }))
    }
    const { ids } = await pageThrough(t, `/v1/payments?invoiceId=${inv.id}`, 7, async () => {
      await create(t, '/v1/payments', paymentBody({ amount: 1, invoiceId: inv.id }))
    })
    assert.deepEqual(ids, [...made].reverse())
  })

  for (const [path, body] of [['/v1/invoices', invoiceBody], ['/v1/itineraries', itineraryBody]] as const) {
    test(`${path}: 21 records in pages of 4 while more are added`, async () => {
      const t = await app.tenant()
      const made: string[] = []
      for (let i = 0; i < 21; i++) made.push((await create(t, path, body())).id)
      const { ids, pages } = await pageThrough(t, path, 4, () => create(t, path, body()))
      assert.equal(pages, 6)
      assert.deepEqual(ids, [...made].reverse())
    })
  }

  test('a cursor that is not one of ours is a 400', async () => {
    const r = await other.request('GET', '/v1/payments?cursor=not-a-cursor')
    assert.equal(r.status, 400)
    assert.equal(r.body.error.code, 'bad_request')
  })
})
