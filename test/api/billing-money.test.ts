import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { assertEvents, create, EventLog, get, invoiceBody, paymentBody } from '../helpers/billing.ts'

/** Money exactness across invoices and payments, invoice numbering, and what refunds do to an invoice. */
describe('billing money', () => {
  let app: TestApp
  let t: TestTenant
  let log: EventLog
  before(async () => {
    app = await startTestApp()
    t = await app.tenant('Owner')
    log = new EventLog(app)
  })
  after(() => app.close())

  const invoiceOf = (...prices: number[]) =>
    create(t, '/v1/invoices', invoiceBody({ lines: prices.map((unitPrice, i) => ({ description: `line ${i}`, quantity: 1, unitPrice })) }))
  const pay = (invoiceId: string, amount: number) => t.request('POST', '/v1/payments', { body: paymentBody({ invoiceId, amount }) })

  test('invoice lines 0.1 + 0.2 total exactly 0.3, stored as 30 minor units', async () => {
    const inv = await invoiceOf(0.1, 0.2)
    assert.equal(inv.total, 0.3)
    assert.deepEqual(inv.lines.map((l: any) => l.total), [0.1, 0.2])
    const row = await app.server.deps.db.selectFrom('invoices').select(['total', 'lines']).where('id', '=', inv.id).executeTakeFirstOrThrow()
    assert.equal(row.total, 30)
    assert.deepEqual(JSON.parse(row.lines).map((l: any) => l.unitPrice), [10, 20])
    await assertEvents(log, t, ['invoice.created'])
  })

  test('payments of 0.1 and 0.2 settle an invoice of 0.3 exactly, with one invoice.paid', async () => {
    const inv = await invoiceOf(0.3)
    await log.take()
    const first = await pay(inv.id, 0.1)
    assert.equal(first.status, 201)
    await assertEvents(log, t, ['payment.received'])
    assert.equal((await get(t, `/v1/invoices/${inv.id}`)).amountPaid, 0.1)
    const second = await pay(inv.id, 0.2)
    assert.equal(second.status, 201)
    const [, paid] = await assertEvents(log, t, ['payment.received', 'invoice.paid'])
    assert.deepEqual([paid!.data.id, paid!.data.status, paid!.data.amountPaid, paid!.data.total], [inv.id, 'paid', 0.3, 0.3])
    const third = await pay(inv.id, 0.01)
    assert.equal(third.status, 409)
    await assertEvents(log, t, [])
    const all = await app.server.deps.db.selectFrom('events').select('payload').where('name', '=', 'invoice.paid').execute()
    assert.equal(all.filter((e) => JSON.parse(e.payload).data.id === inv.id).length, 1)
  })

  test('payments sent at once never overfill an invoice: three of five fit, one invoice.paid', async () => {
    const inv = await invoiceOf(0.3)
    await log.take()
    const replies = await Promise.all(Array.from({ length: 5 }, () => pay(inv.id, 0.1)))
    assert.deepEqual(replies.map((r) => r.status).sort(), [201, 201, 201, 409, 409])
    const names = (await log.take()).map((e) => e.name).sort()
    assert.deepEqual(names, ['invoice.paid', 'payment.received', 'payment.received', 'payment.received'])
    const now = await get(t, `/v1/invoices/${inv.id}`)
    assert.deepEqual([now.status, now.amountPaid], ['paid', 0.3])
  })

  test('ten payments of 0.1 settle 1.00 on the tenth, not before', async () => {
    const inv = await invoiceOf(1)
    for (let i = 1; i <= 10; i++) {
      assert.equal((await pay(inv.id, 0.1)).status, 201)
      const now = await get(t, `/v1/invoices/${inv.id}`)
      assert.equal(now.status, i < 10 ? 'open' : 'paid', `after payment ${i}`)
      assert.equal(now.amountPaid, Number((i / 10).toFixed(1)))
    }
  })

  test('refunds, part then the rest: amountPaid goes down, a paid invoice stays paid', async () => {
    const inv = await invoiceOf(0.1, 0.2)
    const p1 = (await pay(inv.id, 0.1)).body.data
    const p2 = (await pay(inv.id, 0.2)).body.data
    const paidAt = (await get(t, `/v1/invoices/${inv.id}`)).paidAt
    await log.take()

    const part = await t.request('POST', `/v1/payments/${p2.id}/refund`, { body: { amount: 0.05 } })
    assert.equal(part.status, 200)
    assert.deepEqual([part.body.data.status, part.body.data.refundedAmount, part.body.data.amount], ['partially_refunded', 0.05, 0.2])
    await assertEvents(log, t, ['payment.refunded'])
    let now = await get(t, `/v1/invoices/${inv.id}`)
    assert.deepEqual([now.status, now.amountPaid, now.paidAt], ['paid', 0.25, paidAt])

    const rest = await t.request('POST', `/v1/payments/${p2.id}/refund`)
    assert.equal(rest.status, 200)
    assert.deepEqual([rest.body.data.status, rest.body.data.refundedAmount], ['refunded', 0.2])
    await assertEvents(log, t, ['payment.refunded'])
    now = await get(t, `/v1/invoices/${inv.id}`)
    assert.deepEqual([now.status, now.amountPaid], ['paid', 0.1])

    assert.equal((await t.request('POST', `/v1/payments/${p2.id}/refund`)).status, 409)
    assert.equal((await t.request('POST', `/v1/payments/${p1.id}/refund`, { body: { amount: 0.11 } })).status, 422)
    await assertEvents(log, t, [])
    assert.equal((await get(t, `/v1/invoices/${inv.id}`)).amountPaid, 0.1)
  })

  test('a refund on an open invoice reopens its balance to new payments', async () => {
    const inv = await invoiceOf(1)
    const p = (await pay(inv.id, 0.7)).body.data
    assert.equal((await t.request('POST', `/v1/payments/${p.id}/refund`, { body: { amount: 0.3 } })).status, 200)
    assert.equal((await get(t, `/v1/invoices/${inv.id}`)).amountPaid, 0.4)
    const tooMuch = await pay(inv.id, 0.61)
    assert.equal(tooMuch.status, 422)
    assert.match(tooMuch.body.error.details[0].message, /at most 0.6/)
    assert.equal((await pay(inv.id, 0.6)).status, 201)
    const settled = await get(t, `/v1/invoices/${inv.id}`)
    assert.deepEqual([settled.status, settled.amountPaid], ['paid', 1])
  })

  test('/pay after a part payment settles the remainder: amountPaid becomes the total', async () => {
    const inv = await invoiceOf(10)
    const p = (await pay(inv.id, 3.3)).body.data
    const paid = await create(t, `/v1/invoices/${inv.id}/pay`)
    assert.deepEqual([paid.status, paid.amountPaid], ['paid', 10])
    await t.request('POST', `/v1/payments/${p.id}/refund`)
    assert.equal((await get(t, `/v1/invoices/${inv.id}`)).amountPaid, 6.7)
  })

  test('a payment repeated with the same Idempotency-Key counts once', async () => {
    const inv = await invoiceOf(5)
    await log.take()
    const send = () => t.request('POST', '/v1/payments', { body: paymentBody({ invoiceId: inv.id, amount: 2 }), headers: { 'idempotency-key': 'pay-once' } })
    const a = await send()
    const b = await send()
    assert.equal(a.status, 201)
    assert.equal(b.status, 201)
    assert.equal(b.headers.get('idempotent-replayed'), 'true')
    assert.deepEqual(b.body, a.body)
    await assertEvents(log, t, ['payment.received'])
    assert.equal((await get(t, `/v1/invoices/${inv.id}`)).amountPaid, 2)
  })

  test('invoice numbers are a sequence per tenant, each starting at 1', async () => {
    const fresh = await startTestApp()
    try {
      const a = await fresh.tenant('A')
      const b = await fresh.tenant('B')
      const numbers = []
      for (const who of [a, b, a, b, a]) numbers.push((await create(who, '/v1/invoices', invoiceBody())).invoiceNumber)
      assert.deepEqual(numbers, ['INV-000001', 'INV-000001', 'INV-000002', 'INV-000002', 'INV-000003'])
      // a failed create uses no number
      assert.equal((await b.request('POST', '/v1/invoices', { body: invoiceBody({ orderId: 'ord_01900000-0000-7000-8000-000000000000' }) })).status, 422)
      assert.equal((await create(b, '/v1/invoices', invoiceBody())).invoiceNumber, 'INV-000003')
    } finally {
      await fresh.close()
    }
  })
})
