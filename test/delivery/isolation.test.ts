import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { closedPort, startReceiver, type Receiver } from '../helpers/receiver.ts'

const SECRET = 'isolation-secret-0123'
const TIMEOUT_MS = 2500
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * §9 Fairness: one tenant's hostile subscriptions — header rows the HTTP client refuses,
 * receivers that never answer, many subscriptions to a refused port — never hold up another
 * tenant's healthy delivery for more than 1 s after it is due.
 */
describe('delivery isolation between tenants', () => {
  let app: TestApp
  const receivers: Receiver[] = []
  const addWebhook = async (t: TestTenant, url: string) => {
    const r = await t.request('POST', '/v1/webhooks', { body: { url, events: ['customer.created'], secret: SECRET } })
    assert.equal(r.status, 201, r.text)
    return r.body.data.id as string
  }
  const customer = (t: TestTenant, i: number) =>
    t.request('POST', '/v1/customers', { body: { firstName: 'C', lastName: String(i), email: `c${i}@example.com` } })

  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true, deliveryTimeoutMs: TIMEOUT_MS, retryBaseMs: 60_000 })
  })
  after(async () => {
    await app.close()
    await Promise.all(receivers.map((r) => r.close()))
  })

  test('refused header rows, hanging receivers and refused ports of other tenants do not delay a healthy delivery', async () => {
    const db = app.server.deps.db
    const healthyOfX = await startReceiver()
    const hanging = await startReceiver({ respond: () => ({ hang: true }) })
    const healthyOfY = await startReceiver()
    receivers.push(healthyOfX, hanging, healthyOfY)

    // Tenant X: stored header rows that undici refuses (the API refuses them now; old rows may hold them).
    const x = await app.tenant('X')
    const bad: Record<string, string>[] = [
      { 'X-Price': '10 €' }, { 'X-Ctl': 'a\u0001b' }, { 'X-Nl': 'a\r\nInjected: 1' }, { 'Transfer-Encoding': 'chunked' },
      { Expect: '100-continue' }, { 'Keep-Alive': 'timeout=5' }, { Upgrade: 'websocket' }, { Connection: 'close, upgrade' },
      { 'Bad Name': 'x' }, { 'X-Lone': 'a\uD800b' },
    ]
    for (const headers of bad) {
      const id = await addWebhook(x, healthyOfX.url)
      await sql`UPDATE webhooks SET headers = ${JSON.stringify(headers)} WHERE id = ${id}`.execute(db)
    }
    // Tenant H: receivers that never answer, enough to fill every slot of the old engine.
    const h = await app.tenant('H')
    for (let i = 0; i < 10; i++) await addWebhook(h, `${hanging.url}/h${i}`)
    // Tenant R: many subscriptions to a refused port.
    const r = await app.tenant('R')
    const port = await closedPort()
    for (let i = 0; i < 40; i++) await addWebhook(r, `http://127.0.0.1:${port}/r${i}`)

    for (let i = 0; i < 30; i++) await Promise.all([customer(x, i), customer(h, i), customer(r, i)])
    await sleep(300) // the hostile work is claimed and in flight

    const y = await app.tenant('Y')
    const wh = await addWebhook(y, healthyOfY.url)
    assert.equal((await customer(y, 1)).status, 201)
    await healthyOfY.waitFor(1, 5000)
    let d: any
    // The answer is recorded by the next cycle; the poll only gives up after 30 s (the machine may be
    // loaded: at load 12-20 on 2 cores it took PostgreSQL more than 5 s). How soon Y's delivery
    // was attempted is the bound this test is about, checked below from the attempt log.
    for (let i = 0; i < 600; i++) {
      d = (await y.request('GET', `/v1/webhooks/deliveries?webhook_id=${wh}`)).body.data[0]
      if (d.status !== 'pending') break
      await sleep(50)
    }
    assert.equal(d.status, 'delivered')
    const detail = (await y.request('GET', `/v1/webhooks/deliveries/${d.id}`)).body.data
    const lag = Date.parse(detail.attempt_log[0].at) - Date.parse(d.created_at)
    assert.ok(lag <= 1000, `Y's delivery was attempted ${lag} ms after it was due`)

    // Each refused header row failed its own attempt, with an error, and never reached the receiver.
    const xs = (await x.request('GET', '/v1/webhooks/deliveries?limit=100')).body.data as any[]
    const attempted = xs.filter((row) => row.attempts > 0)
    assert.ok(attempted.length > 0, 'tenant X got attempts too')
    for (const row of attempted) {
      assert.equal(row.status, 'failed')
      assert.equal(row.response_code, null)
    }
    assert.equal(healthyOfX.requests.length, 0)
  })
})
