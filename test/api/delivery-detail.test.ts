import assert from 'node:assert/strict'
import { get, type IncomingMessage } from 'node:http'
import { after, before, describe, test } from 'node:test'
import { sql, type Kysely } from 'kysely'
import { createLogger } from '../../src/lib/logger.ts'
import { ATTEMPT_WINDOW, toDeliveryWithAttempts } from '../../src/modules/webhooks/deliveries.ts'
import * as repo from '../../src/modules/webhooks/repo.ts'
import { startTestApp, orderBody, type TestApp, type TestTenant } from '../helpers/app.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'
import { series } from '../helpers/seed-sql.ts'

// A delivery's single-record view lists every attempt (CONTRACT §7), and manual retries have no
// cap, so a log can hold tens of thousands of attempts of up to 4 KB each. One longer than
// ATTEMPT_WINDOW goes out streamed, a window of attempts read and rendered per turn of the event
// loop and the next only once the client has taken the last: built whole, 50,000 attempts held
// every tenant's requests for 0.5–1 s and took hundreds of MB.

const PAD = 'é→✓'.repeat(1_330) // 3,990 characters, 9,310 bytes of UTF-8

describe('a delivery with a long attempt log', () => {
  let app: TestApp
  let t: TestTenant
  let db: Kysely<any>
  let rx: Receiver
  const logged: string[] = []

  /** A delivered delivery of a fresh order, with `n` more attempts written by the database itself. */
  const deliveryWithLog = async (n: number): Promise<string> => {
    const made = await t.request('POST', '/v1/orders', { body: orderBody() })
    assert.equal(made.status, 201)
    let id: string | undefined
    while (!id) {
      const list = await t.request('GET', '/v1/webhooks/deliveries?status=delivered&limit=100')
      id = list.body.data.find((d: { payload: { data: { id: string } } }) => d.payload.data.id === made.body.data.id)?.id
      if (!id) await new Promise((r) => setTimeout(r, 20))
    }
    await sql`INSERT INTO delivery_attempts (delivery_id, attempt, tenant_id, at, trigger, response_code, duration_ms, error, response_body)
      SELECT ${id}, d.attempts + i, ${t.id}, ${new Date().toISOString()}, 'manual',
        CASE WHEN i % 2 = 0 THEN 500 ELSE NULL END, i % 1000,
        CASE WHEN i % 2 = 0 THEN NULL ELSE 'connect ECONNREFUSED 127.0.0.1:' || i END,
        CASE WHEN i % 2 = 0 THEN 'answer ' || i || ' ' || ${PAD} ELSE NULL END
      FROM ${series(db, n)}, deliveries d WHERE d.id = ${id}`.execute(db)
    await sql`UPDATE deliveries SET attempts = attempts + ${n} WHERE id = ${id}`.execute(db)
    return id
  }

  /** The single-record view built whole, as every record with a short log is. */
  const builtWhole = async (id: string) =>
    JSON.stringify({ data: toDeliveryWithAttempts((await repo.findDelivery(app.server.deps.db, t.id, id))!, await repo.attemptsOf(app.server.deps.db, t.id, id)) })

  before(async () => {
    rx = await startReceiver()
    app = await startTestApp({ allowPrivateTargets: true }, { logger: createLogger('warn', (line) => logged.push(line)) })
    db = app.server.deps.db as unknown as Kysely<any>
    t = await app.tenant('Retried')
    const r = await t.request('POST', '/v1/webhooks', { body: { url: rx.url, events: ['order.created'], secret: 'whsec_0123456789abcdef' } })
    assert.equal(r.status, 201)
  })
  after(async () => {
    await app.close()
    await rx.close()
  })

  test('is the same JSON as one built whole, every attempt in order; only a log longer than ATTEMPT_WINDOW is chunked', async () => {
    const n = 3 * ATTEMPT_WINDOW + 7
    const id = await deliveryWithLog(n)
    const r = await t.request('GET', `/v1/webhooks/deliveries/${id}`)
    assert.equal(r.status, 200)
    assert.equal(r.headers.get('transfer-encoding'), 'chunked')
    assert.equal(r.headers.get('content-length'), null)
    assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8')
    assert.ok(r.headers.get('x-request-id'))
    assert.equal(r.text, await builtWhole(id))
    assert.deepEqual(r.body.data.attempt_log.map((a: { attempt: number }) => a.attempt), Array.from({ length: n + 1 }, (_, i) => i + 1))
    assert.equal(r.body.data.attempts, n + 1)

    const short = await deliveryWithLog(ATTEMPT_WINDOW - 1)
    const s = await t.request('GET', `/v1/webhooks/deliveries/${short}`)
    assert.equal(s.status, 200)
    assert.equal(s.headers.get('transfer-encoding'), null)
    assert.equal(s.headers.get('content-length'), String(Buffer.byteLength(s.text)))
    assert.equal(s.text, await builtWhole(short))
  })

  test('is read as the client takes it: an attempt changed while the client waits is sent as changed', async () => {
    // 10,000 attempts, 47 MB: more than the loopback's socket buffers can hold (4 MB sent, at most
    // 32 MB received), so the last window cannot have been read when the client stops reading.
    const n = 10_000
    const id = await deliveryWithLog(n)
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      get(`${app.url}/v1/webhooks/deliveries/${id}`, { headers: { authorization: `Bearer ${t.key}` } }, resolve).on('error', reject))
    assert.equal(res.statusCode, 200)
    // Read past the first window (≈ 1 MB), then stop reading.
    const chunks: Buffer[] = []
    await new Promise<void>((resolve) => {
      let got = 0
      const take = (chunk: Buffer) => {
        chunks.push(chunk)
        got += chunk.length
        if (got < 2_000_000) return
        res.pause()
        res.off('data', take)
        resolve()
      }
      res.on('data', take)
    })
    await sql`UPDATE delivery_attempts SET response_body = 'changed while the client waited' WHERE delivery_id = ${id} AND attempt IN (3, ${n + 1})`.execute(db)
    for await (const chunk of res) chunks.push(chunk as Buffer)
    const log = JSON.parse(Buffer.concat(chunks).toString('utf8')).data.attempt_log as { attempt: number; response_body: string | null }[]
    assert.equal(log.length, n + 1)
    const start = (a: { response_body: string | null }) => a.response_body?.slice(0, 31)
    assert.equal(start(log[2]!), `answer 2 ${PAD}`.slice(0, 31), 'the first window went out before the change')
    assert.equal(start(log[n]!), 'changed while the client waited', 'the last window was read after the client stopped reading')
  })

  test('a client that goes away mid-answer ends it quietly; serve answers on', async () => {
    const id = await deliveryWithLog(10_000)
    const before = logged.length
    await new Promise<void>((resolve, reject) => {
      const req = get(`${app.url}/v1/webhooks/deliveries/${id}`, { headers: { authorization: `Bearer ${t.key}` } }, (res) => {
        res.once('data', () => {
          req.destroy()
          resolve()
        })
      }).on('error', (err) => (req.destroyed ? undefined : reject(err)))
    })
    const again = await t.request('GET', `/v1/webhooks/deliveries/${id}`)
    assert.equal(again.status, 200)
    assert.equal(again.body.data.attempt_log.length, 10_001)
    assert.deepEqual(logged.slice(before).filter((l) => l.includes('stream')), [])
  })

  test('a retry with an Idempotency-Key keeps its answer in parts, streamed the first time as on a replay, byte for byte', async () => {
    const id = await deliveryWithLog(ATTEMPT_WINDOW + 50)
    const key = `retry-${id}`
    const first = await t.request('POST', `/v1/webhooks/deliveries/${id}/retry`, { headers: { 'idempotency-key': key } })
    assert.equal(first.status, 200)
    assert.equal(first.headers.get('transfer-encoding'), 'chunked')
    assert.equal(first.body.data.attempt_log.length, ATTEMPT_WINDOW + 51)
    assert.deepEqual(first.body.data.attempt_log.map((a: { attempt: number }) => a.attempt), Array.from({ length: ATTEMPT_WINDOW + 51 }, (_, i) => i + 1))
    // Kept as parts (no row holds the whole answer, which a long log makes hundreds of MB), their text the answer's.
    const record = await sql<{ response: string | null; parts: number; created_at: string }>`SELECT response, parts, created_at FROM idempotency_keys WHERE key_id = ${t.keyId} AND idem_key = ${key}`.execute(db)
    assert.equal(record.rows[0]!.response, null)
    const parts = await sql<{ part: number; body: string }>`SELECT part, body FROM idempotency_parts
      WHERE key_id = ${t.keyId} AND idem_key = ${key} AND created_at = ${record.rows[0]!.created_at} ORDER BY part`.execute(db)
    assert.equal(Number(record.rows[0]!.parts), parts.rows.length)
    assert.ok(parts.rows.length >= 2, `${parts.rows.length} parts`)
    assert.equal(parts.rows.map((p) => p.body).join(''), first.text)

    const again = await t.request('POST', `/v1/webhooks/deliveries/${id}/retry`, { headers: { 'idempotency-key': key } })
    assert.equal(again.status, 200)
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    assert.equal(again.headers.get('transfer-encoding'), 'chunked')
    assert.equal(again.text, first.text)

    // A part gone under a replay (the prune keeps them an hour past their record): the answer, whose
    // status went out, is cut short and the failure logged; nothing else is affected.
    const before = logged.length
    await sql`DELETE FROM idempotency_parts WHERE key_id = ${t.keyId} AND idem_key = ${key} AND part = 1`.execute(db)
    await assert.rejects(t.request('POST', `/v1/webhooks/deliveries/${id}/retry`, { headers: { 'idempotency-key': key } }))
    const cut = () => logged.slice(before).filter((l) => l.includes('response stream failed') && l.includes('part 1 of'))
    for (let i = 0; i < 100 && cut().length === 0; i++) await new Promise((r) => setTimeout(r, 20))
    assert.equal(cut().length, 1, logged.slice(before).join('\n'))
    assert.equal((await t.request('GET', `/v1/webhooks/deliveries/${id}`)).status, 200)

    // 24 h on, the key is free again; taken by an answer kept whole, its replay is that answer, not the old parts.
    await sql`UPDATE idempotency_keys SET created_at = ${new Date(Date.now() - 25 * 3_600_000).toISOString()} WHERE key_id = ${t.keyId} AND idem_key = ${key}`.execute(db)
    const order = await t.request('POST', '/v1/orders', { body: orderBody(), headers: { 'idempotency-key': key } })
    assert.equal(order.status, 201)
    const replayed = await t.request('POST', '/v1/orders', { body: orderBody(), headers: { 'idempotency-key': key } })
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true')
    assert.equal(replayed.text, order.text)
  })
})
