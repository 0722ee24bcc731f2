import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { orderBody, startTestApp, type TestApp } from '../helpers/app.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

let app: TestApp
let rx: Receiver
before(async () => {
  app = await startTestApp({ allowPrivateTargets: true, retryBaseMs: 100 })
  rx = await startReceiver({ respond: (_req, n) => (n === 0 ? { status: 503, headers: { 'Retry-After': '3' } } : { status: 200 }) })
})
after(async () => {
  await app.close()
  await rx.close()
})

/** §11 Receiver back-pressure: a 503 with Retry-After: 3 delays the next attempt ≥ 3 s even with --retry-base 100. */
test('a 503 with Retry-After: 3 is retried no earlier than 3 s later', async () => {
  const t = await app.tenant()
  const wh = (await t.request('POST', '/v1/webhooks', { body: { url: rx.url, events: ['order.created'], secret: 'retry-after-secret-01' } })).body.data.id
  await t.request('POST', '/v1/orders', { body: orderBody() })
  const [first] = await rx.waitFor(1)
  const d = (await t.request('GET', `/v1/webhooks/deliveries?webhook_id=${wh}`)).body.data[0]
  for (let i = 0; i < 40 && d.attempts === 0; i++) await new Promise((r) => setTimeout(r, 25))
  const queued = (await t.request('GET', `/v1/webhooks/deliveries/${d.id}`)).body.data
  assert.equal(queued.response_code, 503)
  assert.ok(Date.parse(queued.next_retry_at) - Date.parse(queued.attempt_log[0].at) >= 3000, `next_retry_at ${queued.next_retry_at}`)
  const [, second] = await rx.waitFor(2, 8000)
  assert.ok(second!.at - first!.at >= 3000, `retried after ${second!.at - first!.at} ms`)
})
