import assert from 'node:assert/strict'
import { openWithStore } from '../helpers/engine.ts'
import { after, before, describe, test } from 'node:test'
import { createSender } from '../../src/delivery/send.ts'
import { startWorker } from '../../src/delivery/worker.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { DEFAULT_CONFIG } from '../../src/config.ts'
import { withTx } from '../../src/engine/tx.ts'
import { emit } from '../../src/events/emit.ts'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

const TIMEOUT_MS = 600
const SECRET = 'deadline-secret-0123'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** §9 Hard deadline: every attempt ends, and frees its slot, at most 1 s after --delivery-timeout. */
describe('every attempt ends by the deadline + 1 s', () => {
  let app: TestApp
  let t: TestTenant
  const receivers: Receiver[] = []
  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true, deliveryTimeoutMs: TIMEOUT_MS, retryBaseMs: 3_600_000 })
    t = await app.tenant()
  })
  after(async () => {
    await app.close()
    await Promise.all(receivers.map((r) => r.close()))
  })

  const attemptsOf = async (webhookId: string, count: number) => {
    for (let i = 0; i < 200; i++) {
      const rows = (await t.request('GET', `/v1/webhooks/deliveries?webhook_id=${webhookId}&limit=100`)).body.data as any[]
      if (rows.length === count && rows.every((r) => r.attempts > 0)) {
        return Promise.all(rows.map(async (r) => (await t.request('GET', `/v1/webhooks/deliveries/${r.id}`)).body.data.attempt_log[0]))
      }
      await sleep(50)
    }
    throw new Error('attempts did not finish')
  }

  for (const [name, reply, code] of [['never answers', { hang: true }, null], ['sends headers, then stalls the body', { status: 200, hang: 'after-headers' }, 200]] as const) {
    test(`a receiver that ${name}: more deliveries than connections, each attempt a timeout within the bound`, async () => {
      const rx = await startReceiver({ respond: () => reply })
      receivers.push(rx)
      const wh = (await t.request('POST', '/v1/webhooks', { body: { url: rx.url, events: ['customer.created'], secret: SECRET } })).body.data.id
      // 12 deliveries of one subscription: 8 in flight at once, the rest wait their turn.
      for (let i = 0; i < 12; i++) await t.request('POST', '/v1/customers', { body: { firstName: 'A', lastName: String(i), email: `a${i}@example.com` } })
      const log = await attemptsOf(wh, 12)
      for (const a of log) {
        assert.equal(a.response_code, code, 'a status that arrived is kept')
        assert.match(a.error, /timeout/)
        assert.ok(a.duration_ms <= TIMEOUT_MS + 1000, `attempt took ${a.duration_ms} ms`)
      }
    })
  }

  test('a receiver that answers 200 at once and trickles its body past the deadline: its 200 and the body so far are recorded, and it counts', async () => {
    const rx = await startReceiver({ respond: () => ({ status: 200, body: 'ok', trickleMs: 50 }) })
    receivers.push(rx)
    const wh = (await t.request('POST', '/v1/webhooks', { body: { url: rx.url, events: ['customer.created'], secret: SECRET } })).body.data.id
    await t.request('POST', '/v1/customers', { body: { firstName: 'T', lastName: 'Rickle', email: 'trickle@example.com' } })
    const [a] = await attemptsOf(wh, 1)
    assert.equal(a.response_code, 200)
    assert.equal(a.error, `timeout after ${TIMEOUT_MS} ms: the response body was cut off`)
    assert.match(a.response_body, /^ok\.+$/)
    assert.ok(a.duration_ms <= TIMEOUT_MS + 1000, `attempt took ${a.duration_ms} ms`)
    const d = (await t.request('GET', `/v1/webhooks/deliveries?webhook_id=${wh}`)).body.data[0]
    assert.equal(d.status, 'delivered')
    assert.equal(d.next_retry_at, null)
  })

  test('a 503 with Retry-After whose body trickles past the deadline: the status is recorded and its Retry-After sets the retry', async () => {
    const rx = await startReceiver({ respond: () => ({ status: 503, headers: { 'Retry-After': '7200' }, trickleMs: 50 }) })
    receivers.push(rx)
    const wh = (await t.request('POST', '/v1/webhooks', { body: { url: rx.url, events: ['customer.created'], secret: SECRET } })).body.data.id
    await t.request('POST', '/v1/customers', { body: { firstName: 'T', lastName: 'Busy', email: 'busy@example.com' } })
    const [a] = await attemptsOf(wh, 1)
    assert.equal(a.response_code, 503)
    const d = (await t.request('GET', `/v1/webhooks/deliveries?webhook_id=${wh}`)).body.data[0]
    assert.equal(d.status, 'failed')
    assert.ok(Date.parse(d.next_retry_at) - Date.parse(a.at) >= 7_100_000, `retry at ${d.next_retry_at} after ${a.at}`)
  })

  test('a request queued behind a busy connection in the HTTP client still ends on time', async () => {
    const rx = await startReceiver({ respond: () => ({ hang: true }) })
    receivers.push(rx)
    const sender = createSender({ timeoutMs: TIMEOUT_MS, allowPrivate: true, userAgent: 'travelops/test', connectionsPerKey: 1 })
    try {
      const results = await Promise.all([0, 1, 2].map(() => sender.send({ key: 'one', url: rx.url, body: '{}', headers: {} })))
      for (const r of results) {
        assert.equal(r.responseCode, null)
        assert.ok(r.durationMs <= TIMEOUT_MS + 1000, `attempt took ${r.durationMs} ms`)
      }
    } finally {
      await sender.close()
    }
  })

  test('the engine ends an attempt whose HTTP client never returns, and drops that dispatcher', async () => {
    // A second, standalone worker on a database of its own, with a sender that never settles
    // (as undici did with a request it refused while queued).
    const other = await startTestApp({ allowPrivateTargets: true })
    const u = await other.tenant()
    const wh = (await u.request('POST', '/v1/webhooks', { body: { url: 'http://127.0.0.1:9/', events: ['order.created'], secret: SECRET } })).body.data.id
    const dbFile = other.dbFile
    await other.server.stop(0)
    const { opened, store } = await openWithStore(dbFile)
    const resets: string[] = []
    const stuck = { send: () => new Promise<never>(() => {}), reset: (k: string) => void resets.push(k), close: async () => {} }
    const ctx = { db: opened.db, engine: opened.engine, clock: systemClock, config: DEFAULT_CONFIG, logger: createLogger('silent'), notify: () => {}, tenantId: u.id, keyId: u.keyId }
    await withTx(opened.engine, (scope) => emit(scope, ctx, 'order.created', { id: 'ord_x' }))
    const worker = startWorker({
      store, clock: systemClock, logger: createLogger('silent'), sender: stuck,
      userAgent: 'travelops/test', retryBaseMs: 3_600_000, timeoutMs: TIMEOUT_MS,
    })
    try {
      let row: { attempts: number; locked_until: string | null } | undefined
      for (let i = 0; i < 100 && !(row && row.attempts > 0); i++) {
        await sleep(50)
        row = await opened.db.selectFrom('deliveries').select(['attempts', 'locked_until']).where('webhook_id', '=', wh).executeTakeFirst()
      }
      assert.equal(row?.attempts, 1)
      assert.equal(row?.locked_until, null, 'the slot and the lease are free again')
      const a = await opened.db.selectFrom('delivery_attempts').selectAll().executeTakeFirstOrThrow()
      assert.equal(a.response_code, null)
      assert.equal(a.error, `timeout after ${TIMEOUT_MS} ms`)
      assert.ok(a.duration_ms <= TIMEOUT_MS + 1000, `attempt took ${a.duration_ms} ms`)
      assert.deepEqual(resets, [wh])
    } finally {
      await worker.stop(0)
      await opened.close()
      await other.close()
    }
  })
})
