import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'

describe('orders: money, numbers, transitions, events, paging, tenancy', () => {
  let app: TestApp
  let a: TestTenant
  let b: TestTenant
  const eventsOf = (tenantId: string) =>
    app.server.deps.db.selectFrom('events').selectAll().where('tenant_id', '=', tenantId).orderBy('id').execute()

  before(async () => {
    app = await startTestApp()
    a = await app.tenant('A')
    b = await app.tenant('B')
  })
  after(() => app.close())

  test('money is exact: items 0.1 + 0.2 → total 0.3; 3-decimal and 0-decimal currencies', async () => {
    const r = await a.request('POST', '/v1/orders', { body: orderBody({ items: [
      { description: 'a', quantity: 1, unitPrice: 0.1 }, { description: 'b', quantity: 1, unitPrice: 0.2 },
    ] }) })
    assert.equal(r.body.data.total, 0.3)
    const many = await a.request('POST', '/v1/orders', { body: orderBody({ items: [{ description: 'x', quantity: 3, unitPrice: 0.1 }] }) })
    assert.equal(many.body.data.items[0].total, 0.3)
    assert.equal(many.body.data.total, 0.3)
    const kwd = await a.request('POST', '/v1/orders', { body: orderBody({ currency: 'KWD', items: [{ description: 'x', quantity: 7, unitPrice: 1.001 }] }) })
    assert.equal(kwd.body.data.total, 7.007)
    const jpy = await a.request('POST', '/v1/orders', { body: orderBody({ currency: 'JPY', items: [{ description: 'x', quantity: 2, unitPrice: 15000 }] }) })
    assert.equal(jpy.body.data.total, 30000)
    const patched = await a.request('PATCH', `/v1/orders/${r.body.data.id}`, { body: { currency: 'JPY' } })
    assert.equal(patched.status, 422, 'EUR cents cannot become yen')
    assert.equal(patched.body.error.details[0].path, 'items[0].unitPrice')
  })

  test('an order reads back as the same JSON text its creation answered, alone and in a list (both rendered from the row)', async () => {
    const product = await a.request('POST', '/v1/products', { body: { name: 'Fjord cruise', price: 149.5, currency: 'EUR' } })
    assert.equal(product.status, 201, product.text)
    const bodies = [
      orderBody({ items: [{ description: 'a "quoted", \\ line\u2028', quantity: 3, unitPrice: 0.1 }, { productId: product.body.data.id, description: '","quantity":1,"unitPrice":2}', quantity: 2, unitPrice: 149.5 }],
        metadata: { b: '2', a: 'ü' }, notes: 'n' }),
      orderBody({ currency: 'KWD', items: [{ description: 'x', quantity: 7, unitPrice: 1.001 }], customer: { firstName: 'A', lastName: 'B', email: 'a@example.com', phone: '+47 1' } }),
      orderBody({ currency: 'JPY', items: [{ description: 'y', quantity: 2, unitPrice: 15000 }] }),
    ]
    for (const body of bodies) {
      const created = await a.request('POST', '/v1/orders', { body })
      assert.equal(created.status, 201, created.text)
      const id = created.body.data.id
      const got = await a.request('GET', `/v1/orders/${id}`)
      assert.equal(got.text, created.text)
      const listed = await a.request('GET', '/v1/orders?limit=1')
      assert.equal(JSON.stringify(listed.body.data[0]), JSON.stringify(created.body.data))
      assert.equal(listed.text.slice('{"data":['.length, listed.text.indexOf(',"has_more"') - 1), created.text.slice('{"data":'.length, -1))
      const changes = []
      for (const [method, path, change] of [
        ['POST', `/v1/orders/${id}/confirm`, undefined],
        ['PATCH', `/v1/orders/${id}`, { notes: 'changed "notes"' }],
        ['PATCH', `/v1/orders/${id}`, { notes: 'changed "notes"' }], // no change
      ] as const) {
        const changed = await a.request(method, path, { body: change })
        assert.equal(changed.status, 200, changed.text)
        assert.equal((await a.request('GET', `/v1/orders/${id}`)).text, changed.text)
        changes.push(changed)
      }
      // Each event's payload carries the same text as the answer of the change that made it.
      const events = (await eventsOf(a.id)).filter((e) => e.payload.includes(id))
      assert.deepEqual(events.map((e) => e.name), ['order.created', 'order.confirmed', 'order.updated', 'order.updated'])
      const answers = [created, changes[0], changes[0], changes[1]]
      events.forEach((e, i) => {
        const p = JSON.parse(e.payload)
        assert.deepEqual(Object.keys(p), ['id', 'event', 'timestamp', 'tenant_id', 'data'])
        assert.deepEqual([p.id, p.event, p.timestamp, p.tenant_id], [e.id, e.name, e.created_at, a.id])
        assert.equal(e.payload.slice(e.payload.indexOf(',"data":') + ',"data":'.length, -1), answers[i]!.text.slice('{"data":'.length, -1))
      })
    }
  })

  test('concurrent changes all succeed, as one writer at a time would have them: 64 PATCHes of one order at once, beside 64 new orders and webhooks subscribed', async () => {
    // On PostgreSQL these conflict (SERIALIZABLE) and are run again until they succeed; a client never gets a 409 for it.
    const rx = `https://hooks.example.com/concurrent`
    for (const events of [['order.created'], ['*']]) {
      assert.equal((await a.request('POST', '/v1/webhooks', { body: { url: rx, events, secret: 'concurrent-secret-0123456789' } })).status, 201)
    }
    const id = (await a.request('POST', '/v1/orders', { body: orderBody() })).body.data.id as string
    const replies = await Promise.all([
      ...Array.from({ length: 64 }, (_, i) => a.request('PATCH', `/v1/orders/${id}`, { body: { notes: `writer ${i}` } })),
      ...Array.from({ length: 64 }, () => a.request('POST', '/v1/orders', { body: orderBody() })),
    ])
    assert.deepEqual(replies.map((r) => r.status), [...Array(64).fill(200), ...Array(64).fill(201)], JSON.stringify(replies.find((r) => r.status >= 300)?.body))
    const last = (await a.request('GET', `/v1/orders/${id}`)).body.data
    assert.match(last.notes, /^writer \d+$/)
    const updated = (await eventsOf(a.id)).filter((e) => e.name === 'order.updated' && JSON.parse(e.payload).data.id === id)
    assert.equal(updated.length, 64, 'one order.updated per PATCH')
  })

  test('order numbers are a per-tenant sequence', async () => {
    const t1 = await app.tenant('seq1')
    const t2 = await app.tenant('seq2')
    const n = async (t: TestTenant) => (await t.request('POST', '/v1/orders', { body: orderBody() })).body.data.orderNumber
    assert.equal(await n(t1), 'ORD-000001')
    assert.equal(await n(t1), 'ORD-000002')
    assert.equal(await n(t2), 'ORD-000001')
    assert.equal(await n(t1), 'ORD-000003')
  })

  test('transitions: pending→confirmed→completed; cancel from pending or confirmed; others 409', async () => {
    const make = async () => (await a.request('POST', '/v1/orders', { body: orderBody() })).body.data.id as string
    const o1 = await make()
    assert.equal((await a.request('POST', `/v1/orders/${o1}/confirm`)).body.data.status, 'confirmed')
    assert.equal((await a.request('POST', `/v1/orders/${o1}/cancel`)).body.data.status, 'cancelled')
    assert.equal((await a.request('POST', `/v1/orders/${o1}/confirm`)).status, 409)
    assert.equal((await a.request('PATCH', `/v1/orders/${o1}`, { body: { status: 'pending' } })).status, 409)
    const o2 = await make()
    assert.equal((await a.request('PATCH', `/v1/orders/${o2}`, { body: { status: 'completed' } })).status, 409, 'pending cannot complete')
    assert.equal((await a.request('PATCH', `/v1/orders/${o2}`, { body: { status: 'confirmed' } })).body.data.status, 'confirmed')
    assert.equal((await a.request('PATCH', `/v1/orders/${o2}`, { body: { status: 'completed' } })).body.data.status, 'completed')
    assert.equal((await a.request('POST', `/v1/orders/${o2}/cancel`)).status, 409)
    const notes = await a.request('PATCH', `/v1/orders/${o2}`, { body: { notes: 'still allowed' } })
    assert.equal(notes.status, 200)
  })

  test('events: one row per emitted event, data equal to GET, none for failures or no-op PATCHes', async () => {
    const t = await app.tenant('events')
    const created = await t.request('POST', '/v1/orders', { body: orderBody() })
    const id = created.body.data.id
    await t.request('POST', '/v1/orders', { body: orderBody({ bogus: 1 }) }) // 422
    await t.request('PATCH', `/v1/orders/${id}`, { body: { notes: null } }) // no change
    await t.request('PATCH', `/v1/orders/${id}`, { body: { travelDate: '2027-06-01' } }) // same value
    const patched = await t.request('PATCH', `/v1/orders/${id}`, { body: { notes: 'hello' } })
    const confirmed = await t.request('POST', `/v1/orders/${id}/confirm`)
    await t.request('POST', `/v1/orders/${id}/confirm`) // 409
    const cancelled = await t.request('POST', `/v1/orders/${id}/cancel`)
    const events = await eventsOf(t.id)
    assert.deepEqual(events.map((e) => e.name), [
      'order.created', 'order.updated', 'order.confirmed', 'order.updated', 'order.cancelled', 'order.updated',
    ])
    const payloads = events.map((e) => JSON.parse(e.payload))
    assert.deepEqual(payloads[0].data, created.body.data)
    assert.deepEqual(payloads[1].data, patched.body.data)
    assert.deepEqual(payloads[2].data, confirmed.body.data)
    assert.deepEqual(payloads[5].data, cancelled.body.data)
    assert.deepEqual(payloads[5].data, (await t.request('GET', `/v1/orders/${id}`)).body.data)
    for (const [i, p] of payloads.entries()) {
      assert.equal(p.id, events[i]!.id)
      assert.match(p.id, /^evt_/)
      assert.equal(p.tenant_id, t.id)
      assert.equal(p.event, events[i]!.name)
      assert.equal(p.timestamp, events[i]!.created_at)
    }
  })

  test('paging through 45+ orders while more are added neither repeats nor skips', async () => {
    const t = await app.tenant('paging')
    const ids: string[] = []
    for (let i = 0; i < 47; i++) ids.push((await t.request('POST', '/v1/orders', { body: orderBody() })).body.data.id)
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const r: { body: { data: { id: string }[]; has_more: boolean; next_cursor: string | null } } =
        await t.request('GET', `/v1/orders?limit=10${cursor ? `&cursor=${cursor}` : ''}`)
      seen.push(...r.body.data.map((o) => o.id))
      cursor = r.body.next_cursor
      assert.equal(r.body.has_more, cursor !== null)
      await t.request('POST', '/v1/orders', { body: orderBody() }) // added while paging
      pages++
    } while (cursor)
    assert.equal(pages, 5)
    assert.equal(new Set(seen).size, seen.length, 'no repeats')
    assert.deepEqual(seen.filter((id) => ids.includes(id)), [...ids].reverse(), 'every original order, newest first')
  })

  test('tenant B never sees or changes A\'s orders', async () => {
    const mine = (await a.request('POST', '/v1/orders', { body: orderBody() })).body.data.id
    for (const [method, path] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/confirm'], ['POST', '/cancel']] as const) {
      const r = await b.request(method, `/v1/orders/${mine}${path}`, { body: method === 'PATCH' ? { notes: 'x' } : undefined })
      assert.equal(r.status, 404, `${method} ${path}`)
    }
    const list = await b.request('GET', '/v1/orders?limit=100')
    assert.ok(!list.body.data.some((o: { id: string }) => o.id === mine))
    assert.equal((await a.request('GET', `/v1/orders/${mine}`)).body.data.status, 'pending', 'untouched')
    assert.equal((await eventsOf(b.id)).length, 0)
  })
})
