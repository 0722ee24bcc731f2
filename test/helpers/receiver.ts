import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A real webhook receiver for tests: an HTTP server on 127.0.0.1, random port.
 *
 *   const rx = await startReceiver({ respond: [500, 500, 200] }) // statuses in turn, last repeats
 *   const rx = await startReceiver({ respond: (req, n) => ({ status: n < 2 ? 503 : 200 }) })
 *   ...send to rx.url (+ any path)...
 *   const [first] = await rx.waitFor(1)           // resolves with rx.requests once ≥ 1 arrived
 *   assert.equal(first.headers['x-webhook-id'], 'evt_…')
 *   await rx.close()                              // also cuts hanging connections
 *
 * Default reply: 200 with an empty body. A `Reply` may delay the answer (`delayMs`), never
 * answer (`hang: true`), send status, headers and body but never finish (`hang: 'after-headers'`),
 * or send them and then a byte of body every `trickleMs` until the connection closes.
 */

export type ReceivedRequest = {
  method: string
  /** Path and query as sent. */
  url: string
  /** Lower-cased header names, as node:http gives them. */
  headers: Record<string, string | string[] | undefined>
  body: string
  /** Date.now() when the body had fully arrived. */
  at: number
}
export type Reply = {
  status?: number
  body?: string
  headers?: Record<string, string>
  delayMs?: number
  hang?: true | 'after-headers'
  trickleMs?: number
}
/** `n` counts from 0: the first request is n = 0. */
export type Responder = (req: ReceivedRequest, n: number) => Reply | Promise<Reply>
export type ReceiverOptions = { respond?: Responder | readonly number[] }
export type Receiver = {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string
  /** Every request so far, in arrival order. */
  requests: ReceivedRequest[]
  /** TCP connections accepted so far (a refused-after-connect attempt shows up here only). */
  readonly connections: number
  /** Resolves with `requests` once at least `count` arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>
  close(): Promise<void>
}

export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const respond = _responder(options.respond)
  const requests: ReceivedRequest[] = []
  const waiters = new Set<() => void>()
  const timers = new Set<NodeJS.Timeout>()
  let connections = 0

  const server = createServer((req, res) => {
    _handle(req, res).catch(() => res.destroy()) // a throwing responder cuts the connection
  })
  async function _handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const received: ReceivedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: { ...req.headers },
      body: Buffer.concat(chunks).toString('utf8'),
      at: Date.now(),
    }
    const n = requests.push(received) - 1
    for (const wake of waiters) wake()
    const reply = await respond(received, n)
    if (reply.hang === true) return
    const answer = () => {
      res.writeHead(reply.status ?? 200, reply.headers)
      if (reply.hang === 'after-headers') res.write(reply.body ?? ' ')
      else if (reply.trickleMs !== undefined) _trickle(res, reply.body ?? ' ', reply.trickleMs)
      else res.end(reply.body ?? '')
    }
    if (reply.delayMs === undefined) return answer()
    const timer = setTimeout(() => {
      timers.delete(timer)
      answer()
    }, reply.delayMs)
    timers.add(timer)
  }
  function _trickle(res: ServerResponse, first: string, everyMs: number): void {
    res.write(first)
    const timer = setInterval(() => res.write('.'), everyMs)
    timers.add(timer)
    res.on('close', () => {
      clearInterval(timer)
      timers.delete(timer)
    })
  }
  server.on('connection', () => connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  function waitFor(count: number, timeoutMs = 5000): Promise<ReceivedRequest[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (requests.length < count) return
        cleanup()
        resolve(requests)
      }
      const timer = setTimeout(() => {
        cleanup()
        reject(new Error(`receiver: expected ${count} request(s) within ${timeoutMs} ms, got ${requests.length}`))
      }, timeoutMs)
      const cleanup = () => {
        clearTimeout(timer)
        waiters.delete(check)
      }
      waiters.add(check)
      check()
    })
  }

  async function close(): Promise<void> {
    for (const timer of timers) clearTimeout(timer)
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    server.closeAllConnections()
    await closed
  }

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get connections() {
      return connections
    },
    waitFor,
    close,
  }
}

function _responder(respond: ReceiverOptions['respond']): Responder {
  if (typeof respond === 'function') return respond
  const statuses = respond ?? [200]
  return (_req, n) => ({ status: statuses[Math.min(n, statuses.length - 1)] ?? 200 })
}

/** A port on 127.0.0.1 that nothing listens on (connections to it are refused). */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
