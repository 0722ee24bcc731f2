import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'

// GET /v1/webhooks/deliveries?event_id=…: the deliveries one event made (the dashboard's event
// page), on both engines — exactly that event's, within the key's tenant, paged as every list.

describe('deliveries of one event (event_id)', () => {
  let app: TestApp
  let a: TestTenant
  let b: TestTenant
  const hooks: string[] = []
  let created: { id: string; event: string }
  let confirmed: { id: string; event: string }
  let theirs: { id: string }

  const hook = async (t: TestTenant, events: string[]) => {
    const r = await t.request('POST', '/v1/webhooks', { body: { url: 'https://hooks.example.invalid/in', events, secret: 's3cret-s3cret-s3cret' } })
    assert.equal(r.status, 201, r.text)
    return r.body.data.id as string
  }
  const deliveriesOf = async (t: TestTenant, query: string) => {
    const r = await t.request('GET', `/v1/webhooks/deliveries?${query}`)
    assert.equal(r.status, 200, r.text)
    return r.body as { data: { id: string; event_id: string; webhook_id: string; event: string }[]; has_more: boolean; next_cursor: string | null }
  }

  before(async () => {
    app = await startTestApp()
    a = await app.tenant('A')
    b = await app.tenant('B')
    hooks.push(await hook(a, ['*']), await hook(a, ['order.created']), await hook(a, ['order.confirmed', 'order.created']))
    await hook(b, ['*'])
    const order = (await a.request('POST', '/v1/orders', { body: orderBody() })).body.data
    assert.equal((await a.request('POST', `/v1/orders/${order.id}/confirm`)).status, 200)
    assert.equal((await b.request('POST', '/v1/orders', { body: orderBody() })).status, 201)
    const events = (await a.request('GET', '/v1/events?type=order.*')).body.data as { id: string; event: string }[]
    created = events.find((e) => e.event === 'order.created')!
    confirmed = events.find((e) => e.event === 'order.confirmed')!
    theirs = (await b.request('GET', '/v1/events?type=order.created')).body.data[0]
    assert.ok(created && confirmed && theirs)
  })
  after(() => app.close())

  test('exactly the deliveries of that event: one per subscription it was sent to, newest first', async () => {
    const all = (await deliveriesOf(a, 'limit=100')).data
    for (const e of [created, confirmed]) {
      const page = await deliveriesOf(a, `event_id=${e.id}`)
      // Ids only: the attempts under way change a record's status between the two reads.
      const expected = all.filter((d) => d.event_id === e.id).map((d) => d.id)
      assert.deepEqual(page.data.map((d) => d.id), expected, 'the same records as the unfiltered list, in its order')
      assert.ok(page.data.every((d) => d.event_id === e.id && d.event === e.event))
      assert.equal(page.has_more, false)
    }
    const made = (await deliveriesOf(a, `event_id=${created.id}`)).data
    assert.deepEqual(made.map((d) => d.webhook_id).sort(), [...hooks].sort(), 'order.created went to all three subscriptions')
    assert.deepEqual((await deliveriesOf(a, `event_id=${confirmed.id}`)).data.map((d) => d.webhook_id).sort(), [hooks[0], hooks[2]].sort())
  })

  test('with the other filters, and paged', async () => {
    const one = await deliveriesOf(a, `event_id=${created.id}&webhook_id=${hooks[1]}`)
    assert.deepEqual(one.data.map((d) => d.webhook_id), [hooks[1]])
    assert.deepEqual((await deliveriesOf(a, `event_id=${created.id}&event=order.confirmed`)).data, [])
    const whole = (await deliveriesOf(a, `event_id=${created.id}`)).data.map((d) => d.id)
    const seen: string[] = []
    let cursor = ''
    for (;;) {
      const page = await deliveriesOf(a, `event_id=${created.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      seen.push(...page.data.map((d) => d.id))
      if (!page.has_more) break
      cursor = page.next_cursor!
    }
    assert.deepEqual(seen, whole)
  })

  test('tenancy: another tenant\'s event id lists nothing, and each tenant sees its own', async () => {
    assert.deepEqual(await deliveriesOf(b, `event_id=${created.id}`), { data: [], has_more: false, next_cursor: null })
    assert.deepEqual(await deliveriesOf(a, `event_id=${theirs.id}`), { data: [], has_more: false, next_cursor: null })
    const own = await deliveriesOf(b, `event_id=${theirs.id}`)
    assert.equal(own.data.length, 1)
    assert.equal(own.data[0]!.event_id, theirs.id)
    const unknown = await deliveriesOf(a, 'event_id=evt_0190a0b0-1234-7abc-8def-0123456789ab')
    assert.deepEqual(unknown.data, [])
  })

  test('a malformed id is a 400 naming the parameter', async () => {
    for (const bad of ['nope', 'del_0190a0b0-1234-7abc-8def-0123456789ab', 'evt_0190A0B0-1234-7ABC-8DEF-0123456789AB', '']) {
      const r = await a.request('GET', `/v1/webhooks/deliveries?event_id=${encodeURIComponent(bad)}`)
      assert.equal(r.status, 400, `${bad}: ${r.text}`)
      assert.equal(r.body.error.code, 'bad_request')
      assert.deepEqual(r.body.error.details.map((d: { path: string }) => d.path), ['event_id'], bad)
    }
  })
})
