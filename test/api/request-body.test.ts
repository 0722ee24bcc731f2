import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { MAX_BODY_BYTES } from '../../src/http/body.ts'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'

interface RawReply { status: number; headers: Record<string, string>; body: any }

/** A raw HTTP/1.1 client on one socket: what fetch cannot send (a chunked body of any size, in pieces, on a kept connection). */
class Raw {
  private buf = Buffer.alloc(0)
  private waiting: (() => void) | null = null
  closed = false
  readonly socket: Socket

  private constructor(socket: Socket) {
    this.socket = socket
    socket.on('data', (d: Buffer) => { this.buf = Buffer.concat([this.buf, d]); this.waiting?.() })
    socket.on('close', () => { this.closed = true; this.waiting?.() })
    socket.on('error', () => {}) // a reset after the answer was read is not what is tested
  }

  static async open(url: string): Promise<Raw> {
    const { port } = new URL(url)
    const s = connect(Number(port), '127.0.0.1')
    await new Promise<void>((resolve, reject) => s.once('connect', resolve).once('error', reject))
    return new Raw(s)
  }

  head(method: string, path: string, headers: Record<string, string>): void {
    this.socket.write(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`)
  }

  /** One chunk of a chunked body; resolves once the socket took it. */
  chunk(data: string | Buffer): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data
    return new Promise((resolve) => this.socket.write(Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]), () => resolve()))
  }

  end(): void {
    this.socket.write('0\r\n\r\n')
  }

  /** The next complete response (it carries a content-length). */
  async reply(): Promise<RawReply> {
    for (;;) {
      const at = this.buf.indexOf('\r\n\r\n')
      if (at >= 0) {
        const [statusLine, ...lines] = this.buf.subarray(0, at).toString('latin1').split('\r\n')
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
        const length = Number(headers['content-length'])
        if (this.buf.length >= at + 4 + length) {
          const body = this.buf.subarray(at + 4, at + 4 + length).toString('utf8')
          this.buf = this.buf.subarray(at + 4 + length)
          return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(body) }
        }
      }
      if (this.closed) throw new Error(`connection closed before a complete response: ${JSON.stringify(this.buf.toString('latin1').slice(0, 200))}`)
      await new Promise<void>((resolve) => { this.waiting = resolve })
    }
  }
}

const notes = (n: number) => Buffer.from(JSON.stringify({ ...orderBody(), notes: 'x'.repeat(n) }))

describe('request bodies read from the connection', () => {
  let app: TestApp
  let t: TestTenant
  before(async () => {
    app = await startTestApp()
    t = await app.tenant()
  })
  after(() => app.close())
  const head = () => ({ authorization: `Bearer ${t.key}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' })
  const orders = async () => (await t.request('GET', '/v1/orders?limit=100')).body.data.length as number

  test('a body sent in pieces, with pauses between them, is read whole', async () => {
    const raw = await Raw.open(app.url)
    const body = Buffer.from(JSON.stringify(orderBody({ notes: 'sent in three pieces' })))
    raw.head('POST', '/v1/orders', head())
    for (const piece of [body.subarray(0, 10), body.subarray(10, 40), body.subarray(40)]) {
      await raw.chunk(piece)
      await new Promise((r) => setTimeout(r, 20))
    }
    raw.end()
    const r = await raw.reply()
    assert.equal(r.status, 201, JSON.stringify(r.body))
    assert.equal(r.body.data.notes, 'sent in three pieces')
    raw.socket.destroy()
  })

  test('a chunked body past 1 MiB (no length declared) is a 413 in the error shape, nothing is written, and the connection still serves', async () => {
    const before = await orders()
    const raw = await Raw.open(app.url)
    raw.head('POST', '/v1/orders', head())
    const big = notes(MAX_BODY_BYTES + 200_000)
    for (let at = 0; at < big.length; at += 65_536) await raw.chunk(big.subarray(at, at + 65_536))
    raw.end()
    const r = await raw.reply()
    assert.equal(r.status, 413)
    assert.equal(r.body.error.code, 'payload_too_large')
    assert.notEqual(r.headers.connection, 'close')
    raw.head('GET', '/v1/orders?limit=1', { authorization: `Bearer ${t.key}` })
    assert.equal((await raw.reply()).status, 200)
    raw.socket.destroy()
    assert.equal(await orders(), before)
  })

  test('a body that goes on far past the limit is answered 413 at once and its connection closed', async () => {
    const before = await orders()
    const raw = await Raw.open(app.url)
    raw.head('POST', '/v1/orders', head())
    const piece = Buffer.alloc(65_536, 'x')
    await raw.chunk(Buffer.from('{"notes":"'))
    let sent = 0
    while (sent <= 5 * MAX_BODY_BYTES + 65_536) {
      await raw.chunk(piece)
      sent += piece.length
    }
    // The body is never finished: the answer comes anyway.
    const r = await raw.reply()
    assert.equal(r.status, 413)
    assert.equal(r.body.error.code, 'payload_too_large')
    assert.equal(r.headers.connection, 'close')
    await new Promise<void>((resolve) => (raw.closed ? resolve() : raw.socket.once('close', () => resolve())))
    assert.equal(await orders(), before)
  })

  test('bytes that are not UTF-8 are a 400', async () => {
    const raw = await Raw.open(app.url)
    raw.head('POST', '/v1/orders', head())
    await raw.chunk(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]))
    raw.end()
    const r = await raw.reply()
    assert.equal(r.status, 400)
    assert.equal(r.body.error.code, 'bad_request')
    raw.socket.destroy()
  })
})
