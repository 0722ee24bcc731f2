import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createServer, type AddressInfo } from 'node:net'
import { createSender, RESPONSE_BODY_LIMIT } from '../../src/delivery/send.ts'
import type { Sender } from '../../src/delivery/send.ts'
import { closedPort, startReceiver } from '../helpers/receiver.ts'
import type { Receiver } from '../helpers/receiver.ts'

const body = '{"id":"evt_1","event":"order.created","data":{"note":"Zürich ✈ \\"quoted\\"","n":1}}'
const headers = { 'Content-Type': 'application/json', 'X-Webhook-Signature': 'ab12', 'X-Webhook-ID': 'evt_1', 'X-Custom': 'yes' }
const refusedText = /^target address (127\.0\.0\.1|::1) is not allowed \(loopback\); start the server with --allow-private-targets to permit it$/

describe('sender (allowPrivate: true) against a real receiver', () => {
  let sender: Sender
  before(() => {
    sender = createSender({ timeoutMs: 2000, allowPrivate: true, userAgent: 'travelops/0.1.0' })
  })
  after(() => sender.close())

  async function withReceiver(started: Promise<Receiver>, fn: (rx: Receiver) => Promise<void>): Promise<void> {
    const rx = await started
    try {
      await fn(rx)
    } finally {
      await rx.close()
    }
  }

  it('POSTs the exact body bytes with the given headers and reports 200', () =>
    withReceiver(startReceiver({ respond: () => ({ status: 200, body: 'thanks' }) }), async (rx) => {
      const res = await sender.send({ url: `${rx.url}/hooks/in?x=1`, body, headers })
      assert.deepEqual({ ...res, durationMs: 0 }, { responseCode: 200, durationMs: 0, error: null, responseBody: 'thanks' })
      assert.ok(Number.isInteger(res.durationMs) && res.durationMs >= 0)
      const [req] = await rx.waitFor(1)
      assert.equal(req?.method, 'POST')
      assert.equal(req?.url, '/hooks/in?x=1')
      assert.equal(req?.body, body)
      assert.equal(req?.headers['content-length'], String(Buffer.byteLength(body)))
      assert.equal(req?.headers['content-type'], 'application/json')
      assert.equal(req?.headers['x-webhook-signature'], 'ab12')
      assert.equal(req?.headers['x-webhook-id'], 'evt_1')
      assert.equal(req?.headers['x-custom'], 'yes')
      assert.equal(req?.headers['user-agent'], 'travelops/0.1.0')
    }))

  it('sets its own User-Agent even when the headers carry one', () =>
    withReceiver(startReceiver(), async (rx) => {
      await sender.send({ url: rx.url, body, headers: { 'User-Agent': 'evil/1.0' } })
      const [req] = await rx.waitFor(1)
      assert.equal(req?.headers['user-agent'], 'travelops/0.1.0')
      assert.equal(req?.headers['content-type'], undefined)
    }))

  it('reports 500 with the response body cut to 4 KB', () =>
    withReceiver(startReceiver({ respond: () => ({ status: 500, body: 'x'.repeat(10_000) }) }), async (rx) => {
      const res = await sender.send({ url: rx.url, body, headers })
      assert.equal(res.responseCode, 500)
      assert.equal(res.error, null)
      assert.equal(res.responseBody, 'x'.repeat(RESPONSE_BODY_LIMIT))
    }))

  it('does not split a UTF-8 character at the 4 KB cut', () =>
    withReceiver(startReceiver({ respond: () => ({ status: 400, body: 'a' + 'é'.repeat(3000) }) }), async (rx) => {
      const res = await sender.send({ url: rx.url, body, headers })
      assert.equal(res.responseBody, 'a' + 'é'.repeat(2047)) // 1 + 2047 × 2 = 4095 bytes; the half 'é' is dropped
    }))

  it('keeps the whole body when it is short, and reuses the connection', () =>
    withReceiver(startReceiver({ respond: (_req, n) => ({ status: 202, body: `ok ${n}` }) }), async (rx) => {
      for (let i = 0; i < 5; i++) {
        assert.equal((await sender.send({ url: rx.url, body, headers })).responseBody, `ok ${i}`)
      }
      // keep-alive: connections are reused (undici may open a second one while the first is settling)
      assert.ok(rx.connections < 5, `${rx.connections} connections for 5 requests`)
    }))

  it('stops reading a body past 64 KB: the first 4 KB kept, that connection closed, the next send on a new one', () =>
    withReceiver(startReceiver({ respond: (_req, n) => ({ status: 200, body: n === 0 ? 'y'.repeat(200_000) : 'small' }) }), async (rx) => {
      const res = await sender.send({ url: rx.url, body, headers, key: 'big-body' })
      assert.equal(res.responseCode, 200)
      assert.equal(res.error, null)
      assert.equal(res.responseBody, 'y'.repeat(RESPONSE_BODY_LIMIT))
      assert.equal((await sender.send({ url: rx.url, body, headers, key: 'big-body' })).responseBody, 'small')
      assert.equal(rx.connections, 2)
    }))

  it('reports a receiver that cuts its connection in the middle of its body as an error, without hanging', async () => {
    const server = createServer((socket) => {
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nonly ten b')
        setTimeout(() => socket.destroy(), 20)
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const res = await sender.send({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, body, headers })
      assert.equal(res.responseCode, null)
      assert.ok(res.error && res.error !== 'timeout after 2000 ms', String(res.error))
      assert.equal(res.responseBody, null)
    } finally {
      server.close()
    }
  })

  it('does not follow a 302', () =>
    withReceiver(startReceiver({ respond: (req) => (req.url === '/start' ? { status: 302, headers: { location: '/elsewhere' } } : { status: 200 }) }), async (rx) => {
      const res = await sender.send({ url: `${rx.url}/start`, body, headers })
      assert.equal(res.responseCode, 302)
      assert.equal(res.error, null)
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.deepEqual(rx.requests.map((r) => r.url), ['/start'])
    }))

  it('gives up on a receiver that never answers: null code, timeout error', () =>
    withReceiver(startReceiver({ respond: () => ({ hang: true }) }), async (rx) => {
      const quick = createSender({ timeoutMs: 300, allowPrivate: true, userAgent: 'travelops/0.1.0' })
      try {
        const res = await quick.send({ url: rx.url, body, headers })
        assert.deepEqual({ ...res, durationMs: 0 }, { responseCode: null, durationMs: 0, error: 'timeout after 300 ms', responseBody: null })
        assert.ok(res.durationMs >= 250, `gave up after ${res.durationMs} ms`)
        assert.equal(rx.requests.length, 1)
      } finally {
        await quick.close()
      }
    }))

  it('counts the body in the deadline: headers then a body that never ends → timeout, the status and the body so far kept', () =>
    withReceiver(startReceiver({ respond: () => ({ status: 200, body: 'partial', hang: 'after-headers' }) }), async (rx) => {
      const quick = createSender({ timeoutMs: 300, allowPrivate: true, userAgent: 'travelops/0.1.0' })
      try {
        const res = await quick.send({ url: rx.url, body, headers })
        assert.equal(res.responseCode, 200)
        assert.equal(res.error, 'timeout after 300 ms: the response body was cut off')
        assert.equal(res.responseBody, 'partial')
      } finally {
        await quick.close()
      }
    }))

  it('reports a refused connection with a null code and the error, without throwing', async () => {
    const port = await closedPort()
    const res = await sender.send({ url: `http://127.0.0.1:${port}/`, body, headers })
    assert.equal(res.responseCode, null)
    assert.equal(res.responseBody, null)
    assert.match(res.error ?? '', /ECONNREFUSED/)
  })

  it('reports a URL it cannot send to as an error, without throwing', async () => {
    const res = await sender.send({ url: 'not a url', body, headers })
    assert.equal(res.responseCode, null)
    assert.ok(res.error !== null && res.error.length > 0)
  })
})

describe('sender (allowPrivate: false): SSRF guard', () => {
  let sender: Sender
  before(() => {
    sender = createSender({ timeoutMs: 2000, allowPrivate: false, userAgent: 'travelops/0.1.0' })
  })
  after(() => sender.close())

  for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]']) {
    it(`refuses the loopback literal ${host}: the receiver sees no request, not even a connection`, async () => {
      const rx = await startReceiver()
      try {
        const port = new URL(rx.url).port
        const res = await sender.send({ url: `http://${host}:${port}/`, body, headers })
        assert.equal(res.responseCode, null)
        assert.match(res.error ?? '', host === '127.0.0.1' ? refusedText : /^target address ::ffff:7f00:1 is not allowed \(loopback\)/)
        assert.equal(rx.requests.length, 0)
        assert.equal(rx.connections, 0)
      } finally {
        await rx.close()
      }
    })
  }

  it('refuses a host name that resolves only to loopback (localhost) before connecting', async () => {
    const rx = await startReceiver()
    try {
      const res = await sender.send({ url: `http://localhost:${new URL(rx.url).port}/`, body, headers })
      assert.equal(res.responseCode, null)
      assert.match(res.error ?? '', refusedText)
      assert.equal(rx.requests.length, 0)
      assert.equal(rx.connections, 0)
    } finally {
      await rx.close()
    }
  })
})
