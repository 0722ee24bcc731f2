import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Server } from 'node:http'
import { connectionTimeouts } from '../../src/http/connections.ts'
import { startTestApp } from '../helpers/app.ts'
import { migratedDb, runJson, startServe, type ServeProcess } from '../helpers/cli.ts'

// CONTRACT §16, connections: a connection without a complete head within 10 s, or idle past the
// keep-alive timeout (5 s), is closed; a request's body is bounded too; past --max-connections new
// connections are closed at once, while requests on open connections keep being answered.
// The serves below run with shorter timeouts (TRAVELOPS_TEST_HTTP_TIMEOUTS), so that Node's own
// timeouts are seen closing real connections in seconds; the first test proves §16's figures are
// what serve applies when nothing shortens them.

/** The head, whole-request and keep-alive timeouts of the serves below, ms. */
const HEADERS_TIMEOUT_MS = 3_000
const REQUEST_TIMEOUT_MS = 5_000
const KEEP_ALIVE_TIMEOUT_MS = 2_000
const SHORT = { TRAVELOPS_TEST_HTTP_TIMEOUTS: `${HEADERS_TIMEOUT_MS},${REQUEST_TIMEOUT_MS},${KEEP_ALIVE_TIMEOUT_MS}` }

/** Node checks for expired requests every second; a closing is looked for up to this long past its timeout. */
const SLACK_MS = 2_000

test('serve applies §16\'s timeouts by default: 10 s for the head, 5 s idle between requests, 30 s for a request, checked every second', async () => {
  assert.equal(process.env.TRAVELOPS_TEST_HTTP_TIMEOUTS, undefined)
  const app = await startTestApp()
  try {
    const server = app.server.http as Server & { connectionsCheckingInterval: number }
    assert.equal(server.headersTimeout, 10_000)
    assert.equal(server.keepAliveTimeout, 5_000)
    assert.equal(server.requestTimeout, 30_000)
    assert.equal(server.connectionsCheckingInterval, 1_000)
    // The keep-alive timeout is the one a client sees, in every answer.
    const res = await fetch(`${app.url}/health`)
    assert.equal(res.headers.get('keep-alive'), 'timeout=5')
    await res.arrayBuffer()
  } finally {
    await app.close()
  }
})

test('TRAVELOPS_TEST_HTTP_TIMEOUTS: three ms values, the head\'s below the request\'s, or serve does not start', () => {
  assert.deepEqual(connectionTimeouts({ TRAVELOPS_TEST_HTTP_TIMEOUTS: '3000,5000,1000' }), { headersMs: 3_000, requestMs: 5_000, keepAliveMs: 1_000 })
  for (const bad of ['', '3000,5000', '3000,5000,1000,1', '5000,3000,1000', '3000,5000,0', '3000,5000,1e3', '-1,5000,1000']) {
    assert.throws(() => connectionTimeouts({ TRAVELOPS_TEST_HTTP_TIMEOUTS: bad }), /TRAVELOPS_TEST_HTTP_TIMEOUTS/, bad)
  }
})

describe('connections an idle or slow client holds', () => {
  let dir: string
  const serves: ServeProcess[] = []
  before(() => (dir = mkdtempSync(join(tmpdir(), 'travelops-conn-'))))
  after(async () => {
    await Promise.all(serves.map((s) => s.stop()))
    rmSync(dir, { recursive: true, force: true })
  })
  const serve = async (name: string, args: string[], env: Record<string, string> = {}) => {
    const db = await migratedDb(join(dir, `${name}.db`))
    const tenant = await runJson(['tenants', 'create', '--name', name, '--db', db])
    const key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])).key as string
    const s = await startServe(['--db', db, '--log-level', 'silent', ...args], { ...SHORT, ...env })
    serves.push(s)
    return Object.assign(s, { key })
  }

  test('2× the bound of idle sockets: the excess closed at once, /health answered on an open connection within 1 s, the idle ones closed by the head timeout', async () => {
    // The flag wins over its env twin: 50, not 10.
    const s = await serve('bound', ['--max-connections', '50'], { TRAVELOPS_MAX_CONNECTIONS: '10' })
    const kept = await Probe.open(s.url)
    assert.equal((await kept.get('/health')).status, 200)
    const idle = await Promise.all(Array.from({ length: 100 }, () => Probe.open(s.url)))
    // 49 more fit beside the kept one; the other 51 are closed without a byte.
    const refused = await Probe.firstClosed(idle, 51)
    for (const p of refused) assert.equal(p.received, '', 'refused before anything was read')

    const answered = kept.get('/health')
    const late = new Promise<'late'>((r) => setTimeout(r, 1_000, 'late').unref())
    const health = await Promise.race([answered, late])
    assert.notEqual(health, 'late', '/health on an open connection answered within 1 s')
    assert.equal((health as Reply).status, 200)
    assert.equal((health as Reply).body, '{"status":"ok"}')

    const open = idle.filter((p) => !refused.includes(p))
    assert.equal(open.length, 49)
    for (const p of open) {
      const afterMs = await p.closedWithin(HEADERS_TIMEOUT_MS + SLACK_MS)
      assert.match(p.received, /^HTTP\/1\.1 408 /, 'answered 408 Request Timeout')
      assert.ok(afterMs >= HEADERS_TIMEOUT_MS - 100, `closed ${afterMs} ms after it opened, not before the head timeout`)
    }
    // Idle after its last answer: closed past the keep-alive timeout (Node adds 1 s to the advertised one).
    await kept.closedWithin(KEEP_ALIVE_TIMEOUT_MS + 1_000 + SLACK_MS, kept.lastAnswerAt)
    // Room again: a new connection is answered.
    const fresh = await Probe.open(s.url)
    assert.equal((await fresh.get('/health')).status, 200)
    fresh.socket.destroy()
  })

  test('a head or a body sent a byte at a time is cut off by its timeout; the bound comes from TRAVELOPS_MAX_CONNECTIONS', async () => {
    const s = await serve('slow', [], { TRAVELOPS_MAX_CONNECTIONS: '10' })
    const head = await Probe.open(s.url)
    head.trickle('GET /health HTTP/1.1\r\nHost: x\r\n', 'X-Slow: 1\r\n')
    const body = await Probe.open(s.url)
    // An authenticated POST, so that the server reads the body rather than answering before it.
    body.trickle(`POST /v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`, ' ')
    const idle = await Promise.all(Array.from({ length: 20 }, () => Probe.open(s.url)))
    await Probe.firstClosed(idle, 12) // 10 - 2 fit
    await head.closedWithin(HEADERS_TIMEOUT_MS + SLACK_MS)
    assert.match(head.received, /^HTTP\/1\.1 408 /)
    await body.closedWithin(REQUEST_TIMEOUT_MS + SLACK_MS)
    assert.match(body.received, /^HTTP\/1\.1 408 /, 'nothing answered before the body timed out')
  })
})

interface Reply {
  status: number
  body: string
}

/** A raw TCP connection to the server: what it received, and when it closed. */
class Probe {
  received = ''
  closed = false
  closedAt = 0
  lastAnswerAt = 0
  private readonly closing: Promise<void>
  private waiting: (() => void) | null = null
  private timer: NodeJS.Timeout | undefined

  readonly socket: Socket
  readonly openedAt: number

  private constructor(socket: Socket, openedAt: number) {
    this.socket = socket
    this.openedAt = openedAt
    socket.setEncoding('latin1')
    socket.on('data', (d: string) => {
      this.received += d
      this.waiting?.()
    })
    socket.on('error', () => {}) // a reset is a close like any other here
    this.closing = new Promise((resolve) => socket.on('close', () => {
      this.closed = true
      this.closedAt = performance.now()
      clearInterval(this.timer)
      resolve()
    }))
  }

  static open(url: string): Promise<Probe> {
    const { hostname, port } = new URL(url)
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname)
      socket.once('connect', () => resolve(new Probe(socket, performance.now())))
      socket.once('error', reject)
    })
  }

  /**
   * The first `count` of `probes` to close, once that many have; fails if they have not within
   * half the head timeout (a refusal must not be mistaken for a timeout).
   */
  static async firstClosed(probes: Probe[], count: number): Promise<Probe[]> {
    const order: Probe[] = []
    let timer: NodeJS.Timeout | undefined
    const all = new Promise<void>((resolve) => {
      for (const p of probes) {
        void p.closing.then(() => {
          order.push(p)
          if (order.length === count) resolve()
        })
      }
    })
    const late = new Promise<'late'>((r) => (timer = setTimeout(r, HEADERS_TIMEOUT_MS / 2, 'late')))
    const r = await Promise.race([all, late])
    clearTimeout(timer)
    if (r === 'late') assert.fail(`${order.length} of ${probes.length} connections closed, not ${count}`)
    return order
  }

  /** One keep-alive GET; resolves with the answer once its Content-Length bytes arrived. */
  get(path: string): Promise<Reply> {
    const start = this.received.length
    this.socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
    return new Promise((resolve, reject) => {
      const check = () => {
        const text = this.received.slice(start)
        const end = text.indexOf('\r\n\r\n')
        const length = /\r\ncontent-length: (\d+)/i.exec(text)
        if (end < 0 || !length || text.length < end + 4 + Number(length[1])) {
          if (this.closed) reject(new Error(`closed before the answer: ${text}`))
          return
        }
        this.waiting = null
        this.lastAnswerAt = performance.now()
        resolve({ status: Number(text.slice(9, 12)), body: text.slice(end + 4, end + 4 + Number(length[1])) })
      }
      this.waiting = check
      void this.closing.then(check)
      check()
    })
  }

  /** Writes `first`, then `each` every 200 ms until the connection closes. */
  trickle(first: string, each: string): void {
    this.socket.write(first)
    this.timer = setInterval(() => this.socket.write(each), 200)
  }

  /** Waits for the close; fails past `boundMs` after `from` (default: when it opened). Resolves to the ms it took. */
  async closedWithin(boundMs: number, from = this.openedAt): Promise<number> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<'late'>((r) => (timer = setTimeout(r, Math.max(0, from + boundMs - performance.now()), 'late')))
    const r = await Promise.race([this.closing, late])
    clearTimeout(timer)
    if (r === 'late') {
      this.socket.destroy()
      assert.fail(`still open ${boundMs} ms after ${from === this.openedAt ? 'it opened' : 'its last answer'}`)
    }
    const took = Math.round(this.closedAt - from)
    assert.ok(took <= boundMs, `closed ${took} ms after ${from === this.openedAt ? 'it opened' : 'its last answer'}, past ${boundMs} ms`)
    return took
  }
}
