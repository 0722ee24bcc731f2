import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { newId } from '../../src/lib/ids.ts'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'

// GET /v1/events pages exactly as every list does (CONTRACT §4, §15), in both orders and through
// each way it is read: every event (one index range), one name (another), several names (a range
// each, merged), and a time range (windows). Walking the pages gives exactly the events that
// match, in order, none twice — also while events are added meanwhile.

interface Ev { id: string; event: string; timestamp: string }

describe('/v1/events paging', () => {
  let app: TestApp
  let t: TestTenant
  let all: Ev[] // oldest first

  const walk = async (query: string, limit: number): Promise<Ev[]> => {
    const seen: Ev[] = []
    let cursor: string | null = null
    for (let pages = 0; ; pages++) {
      assert.ok(pages < 200, 'the walk ends')
      const r = await t.request('GET', `/v1/events?limit=${limit}${query ? `&${query}` : ''}${cursor ? `&cursor=${cursor}` : ''}`)
      assert.equal(r.status, 200, r.text)
      assert.ok(r.body.data.length <= limit)
      seen.push(...r.body.data)
      assert.equal(r.body.has_more, r.body.next_cursor !== null)
      cursor = r.body.next_cursor
      if (!cursor) return seen
    }
  }
  const ids = (events: Ev[]) => events.map((e) => e.id)

  before(async () => {
    app = await startTestApp()
    t = await app.tenant()
    // Customers, products and one order in turns: 3 names, interleaved; one rare name (order.created).
    for (let i = 0; i < 12; i++) {
      const body = i % 2 === 0 ? { firstName: `C${i}`, lastName: 'L', email: `c${i}@example.com` } : { name: `P${i}`, price: 10, currency: 'EUR' }
      assert.equal((await t.request('POST', i % 2 === 0 ? '/v1/customers' : '/v1/products', { body })).status, 201)
      if (i === 5) assert.equal((await t.request('POST', '/v1/orders', { body: orderBody() })).status, 201)
    }
    const other = await app.tenant('Other')
    await other.request('POST', '/v1/customers', { body: { firstName: 'O', lastName: 'T', email: 'o@example.com' } })
    all = (await t.request('GET', '/v1/events?order=asc&limit=100')).body.data
    assert.equal(all.length, 13)
  })
  after(() => app.close())

  test('every event, newest first and oldest first, in pages of 1, 2, 5 and 100', async () => {
    assert.deepEqual(ids(all), ids(all).sort(), 'asc: ids ascending')
    for (const limit of [1, 2, 5, 100]) {
      assert.deepEqual(ids(await walk('', limit)), ids(all).reverse(), `desc, limit ${limit}`)
      assert.deepEqual(ids(await walk('order=asc', limit)), ids(all), `asc, limit ${limit}`)
      assert.deepEqual(ids(await walk('order=desc', limit)), ids(all).reverse(), `order=desc, limit ${limit}`)
    }
  })

  test('filtered by one name, by several (merged ranges) and by a family, in both orders', async () => {
    for (const [type, names] of [
      ['customer.created', ['customer.created']],
      ['order.created', ['order.created']],
      ['product.created,order.created', ['product.created', 'order.created']],
      ['customer.*,product.*', ['customer.created', 'product.created']],
      ['order.*,customer.created,product.created', ['order.created', 'customer.created', 'product.created']],
    ] as const) {
      const want = ids(all.filter((e) => (names as readonly string[]).includes(e.event)))
      for (const limit of [1, 3, 100]) {
        assert.deepEqual(ids(await walk(`type=${type}`, limit)), [...want].reverse(), `${type} desc, limit ${limit}`)
        assert.deepEqual(ids(await walk(`type=${type}&order=asc`, limit)), want, `${type} asc, limit ${limit}`)
      }
    }
  })

  test('a time range, alone and with names, in both orders', async () => {
    const from = all[2]!.timestamp
    const to = all[10]!.timestamp
    const inRange = all.filter((e) => e.timestamp > from && e.timestamp < to)
    assert.ok(inRange.length >= 5)
    for (const [query, want] of [
      [`created_after=${from}&created_before=${to}`, inRange],
      [`created_after=${from}`, all.filter((e) => e.timestamp > from)],
      [`created_before=${to}`, all.filter((e) => e.timestamp < to)],
      [`created_after=${from}&created_before=${to}&type=customer.created`, inRange.filter((e) => e.event === 'customer.created')],
      [`created_after=${from}&created_before=${to}&type=customer.created,order.*`, inRange.filter((e) => e.event !== 'product.created')],
    ] as const) {
      for (const limit of [1, 4]) {
        assert.deepEqual(ids(await walk(query, limit)), ids(want).reverse(), `${query} desc, limit ${limit}`)
        assert.deepEqual(ids(await walk(`${query}&order=asc`, limit)), ids(want), `${query} asc, limit ${limit}`)
      }
    }
  })

  test('a time range over more events than a window (1,000), in both orders: the windows go down, or up', async () => {
    const u = await app.tenant('Many')
    const base = Date.parse('2027-01-01T00:00:00.000Z')
    const names = ['order.created', 'customer.created', 'product.created']
    const rows = Array.from({ length: 2600 }, (_, i) => {
      const id = newId('evt')
      const at = new Date(base + i * 1000).toISOString()
      const name = names[i % 3]!
      return { id, tenant_id: u.id, name, created_at: at, payload: JSON.stringify({ id, event: name, timestamp: at, tenant_id: u.id, data: { id: `x${i}` } }) }
    })
    for (let i = 0; i < rows.length; i += 500) await app.server.deps.db.insertInto('events').values(rows.slice(i, i + 500)).execute()
    const from = rows[150]!.created_at
    const to = rows[2450]!.created_at
    const walkAs = async (query: string): Promise<string[]> => {
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const r = await u.request('GET', `/v1/events?limit=100&${query}${cursor ? `&cursor=${cursor}` : ''}`)
        assert.equal(r.status, 200, r.text)
        seen.push(...r.body.data.map((e: Ev) => e.id))
        cursor = r.body.next_cursor
      } while (cursor)
      return seen
    }
    for (const [query, want] of [
      [`created_after=${from}&created_before=${to}`, rows.slice(151, 2450)],
      [`created_after=${from}&created_before=${to}&type=customer.created`, rows.slice(151, 2450).filter((r) => r.name === 'customer.created')],
      [`created_after=${from}&type=customer.created,product.*`, rows.slice(151).filter((r) => r.name !== 'order.created')],
    ] as const) {
      assert.deepEqual(await walkAs(query), want.map((r) => r.id).reverse(), `${query}, newest first`)
      assert.deepEqual(await walkAs(`${query}&order=asc`), want.map((r) => r.id), `${query}, oldest first`)
    }
  })

  test('paging while events are added neither repeats nor skips an event that existed at the start', async () => {
    for (const [order, type] of [['desc', ''], ['asc', ''], ['desc', 'customer.created,product.created'], ['asc', 'customer.created,product.created']]) {
      const at = (await t.request('GET', `/v1/events?order=${order}&limit=100${type ? `&type=${type}` : ''}`)).body.data.map((e: Ev) => e.id)
      const seen: string[] = []
      let cursor: string | null = null
      for (let i = 0; ; i++) {
        const r = await t.request('GET', `/v1/events?order=${order}&limit=3${type ? `&type=${type}` : ''}${cursor ? `&cursor=${cursor}` : ''}`)
        seen.push(...r.body.data.map((e: Ev) => e.id))
        await t.request('POST', '/v1/customers', { body: { firstName: `N${i}`, lastName: order, email: `n${i}${order}@example.com` } })
        cursor = r.body.next_cursor
        if (!cursor) break
      }
      assert.equal(new Set(seen).size, seen.length, `${order} ${type}: nothing twice`)
      for (const id of at) assert.ok(seen.includes(id), `${order} ${type}: ${id} was not skipped`)
      if (order === 'desc') assert.deepEqual(seen, at, 'newest first: events added meanwhile are above the first page')
    }
  })
})
