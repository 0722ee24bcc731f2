import type { IncomingHttpHeaders } from 'node:http'
import type { Agent, Dispatcher } from 'undici'
import { outgoingHeaders } from '../lib/http-headers.ts'
import { guardConnector, guardLookup, plainLookup, type ResolveAll } from './guard-connect.ts'

/** Bytes of the response body kept for the attempt log. */
export const RESPONSE_BODY_LIMIT = 4096
/** Bytes read past the kept prefix so the connection can be reused; beyond this it is closed. */
const _DRAIN_LIMIT = 64 * 1024

export type SendRequest = {
  url: string
  body: string
  headers: Record<string, string>
  /** Requests with the same key share connections (and nothing else): the subscription id. */
  key?: string
}
export type SendResult = {
  /** HTTP status, or null when no status arrived in time (one whose body was then cut off counts: `error` says so). */
  responseCode: number | null
  durationMs: number
  error: string | null
  /** First 4 KB of the response body as text; null when there was no response. */
  responseBody: string | null
  /** The caller's signal ended the attempt before any response: it was not an attempt at all. */
  aborted?: true
  /** The receiver's Retry-After header, as sent, on a 429 or 503 answer. */
  retryAfter?: string
}
export type SenderOptions = {
  /** Deadline for the whole exchange: connect, request, response headers and body. */
  timeoutMs: number
  /** Skip the SSRF guard (`--allow-private-targets`). */
  allowPrivate: boolean
  userAgent: string
  /** Host name resolution (default: the system resolver); tests pass one that never leaves the machine. */
  resolve?: ResolveAll
  /** Connections per origin for one key; the worker never has more attempts of one subscription in flight, so none queue. */
  connectionsPerKey?: number
}
export type Sender = {
  /** One delivery attempt. Never throws; redirects are not followed. `signal` ends it early (shutdown). */
  send(req: SendRequest, signal?: AbortSignal): Promise<SendResult>
  /** Drops the connections of one key (its dispatcher broke a deadline: whatever it holds is destroyed). */
  reset(key: string): void
  /** Destroys every connection at once (requests still in flight end with an error). */
  close(): Promise<void>
}

/** A dispatcher unused this long is closed. */
const _IDLE_MS = 60_000

/**
 * undici, loaded by the first attempt rather than with serve: its modules (with node:http2) are
 * 13 ms of serve's start-up that no request needs.
 */
let _undici: typeof import('undici') | undefined
const _loadUndici = async () => (_undici ??= await import('undici'))

/**
 * The outgoing HTTP sender. Each key (subscription) has its own keep-alive undici Agent:
 * nothing one subscription sends can queue behind, or wedge, another's request (undici keeps
 * a queue per origin inside an Agent, and a request it refuses while queued could leave a
 * connection busy and its queue stuck). Custom headers are checked before dispatch, so a
 * stored header that no HTTP client may send fails only its own attempt.
 */
export function createSender(options: SenderOptions): Sender {
  const { timeoutMs, allowPrivate, userAgent, resolve } = options
  let connect: ReturnType<typeof guardConnector> | undefined
  const _connect = (u: typeof import('undici')) => {
    const base = u.buildConnector({
      timeout: Math.min(timeoutMs, 10_000),
      keepAlive: true,
      ...(allowPrivate ? (resolve ? { lookup: plainLookup(resolve) } : {}) : { lookup: guardLookup(resolve) }),
    })
    return allowPrivate ? base : guardConnector(base)
  }
  const agents = new Map<string, _AgentEntry>()
  const sweep = setInterval(() => {
    const now = Date.now()
    for (const [key, a] of agents) {
      if (a.busy === 0 && now - a.used > _IDLE_MS) {
        agents.delete(key)
        a.agent.close().catch(() => {})
      }
    }
  }, _IDLE_MS / 2)
  sweep.unref()

  const _agent = (u: typeof import('undici'), key: string): _AgentEntry => {
    let a = agents.get(key)
    if (!a) {
      a = {
        agent: new u.Agent({
          connect: (connect ??= _connect(u)),
          connections: options.connectionsPerKey ?? 8, // per origin
          pipelining: 1, // one request at a time per connection, no head-of-line surprises
          allowH2: false,
          keepAliveTimeout: 10_000,
          keepAliveMaxTimeout: 60_000,
          // undici's own timers only as a backstop: the exchange's deadline below is the real one
          headersTimeout: timeoutMs + 1000,
          bodyTimeout: timeoutMs + 1000,
        }),
        used: 0,
        busy: 0,
        url: '',
        origin: '',
        path: '',
      }
      agents.set(key, a)
    }
    a.used = Date.now()
    return a
  }

  async function send(req: SendRequest, signal?: AbortSignal): Promise<SendResult> {
    // The deadline counts from the call, as the worker's backstop does (worker/attempt.ts): the
    // first send of a process loads undici first, which on a loaded machine took longer than the
    // backstop's margin; the backstop then took the attempt for stuck and dropped its
    // subscription's connections, and the other attempts logged "The client is destroyed".
    const started = performance.now()
    let u = _undici
    let loading = 0
    if (!u) {
      u = await _loadUndici()
      loading = performance.now() - started
    }
    const headers = outgoingHeaders(req.headers)
    if (typeof headers === 'string') return { responseCode: null, durationMs: Math.round(performance.now() - started), error: `${headers}: not sent`, responseBody: null }
    headers['user-agent'] = userAgent
    if (signal?.aborted) return { responseCode: null, durationMs: 0, error: 'aborted', responseBody: null, aborted: true }
    const a = _agent(u, req.key ?? '')
    if (a.url !== req.url) {
      // One subscription has one URL: parsed once, not per attempt (a changed URL is parsed again).
      let url: URL
      try {
        url = new URL(req.url)
      } catch (err) {
        return { responseCode: null, durationMs: Math.round(performance.now() - started), error: _describe(err), responseBody: null }
      }
      a.url = req.url
      a.origin = url.origin
      a.path = `${url.pathname}${url.search}`
    }
    const x = new _Exchange(u, a, started, timeoutMs, signal)
    const done = new Promise<SendResult>((resolve) => { x.resolve = resolve })
    a.busy++
    x.timer = setTimeout(_onDeadline, Math.max(0, timeoutMs - loading), x)
    signal?.addEventListener('abort', x, { once: true })
    try {
      a.agent.dispatch({ origin: a.origin, path: a.path, method: 'POST', headers, body: req.body }, x)
    } catch (err) {
      x.onResponseError(null, err as Error)
    }
    return done
  }

  function reset(key: string): void {
    const a = agents.get(key)
    if (!a) return
    agents.delete(key)
    a.agent.destroy().catch(() => {})
  }

  async function close(): Promise<void> {
    clearInterval(sweep)
    const all = [...agents.values()]
    agents.clear()
    await Promise.allSettled(all.map((a) => a.agent.destroy()))
  }

  return { send, reset, close }
}

/** One subscription's keep-alive connections, and its URL as dispatch wants it. */
interface _AgentEntry {
  agent: Agent
  used: number
  busy: number
  url: string
  origin: string
  path: string
}

/**
 * One attempt, as undici's dispatch handler: the status, the Retry-After header and the body's
 * first 4 KB, read to its end (so the connection can be reused) or past 64 KB stopped (and that
 * connection closed); settled once, by the answer, an error, the deadline or shutdown, whichever
 * comes first. Dispatch rather than undici's request(): request()'s handler stores a new closure
 * per request, which kept every request's objects alive past the young generation's collections
 * and cost CPU in every scavenge; this one holds no closure of its own (its
 * timer takes it as an argument, the shutdown signal calls its handleEvent()).
 */
class _Exchange implements Dispatcher.DispatchHandler {
  resolve: (result: SendResult) => void = _noop
  timer: NodeJS.Timeout | undefined
  private controller: Dispatcher.DispatchController | null = null
  private status: number | null = null
  private retryAfter: string | undefined
  private kept: Buffer[] = []
  private keptBytes = 0
  private seen = 0
  /** Ended from this side: by the deadline, or by shutdown (the caller's signal). */
  private ended: 'timeout' | 'aborted' | null = null
  private settled = false

  private readonly u: typeof import('undici')
  private readonly a: _AgentEntry
  private readonly started: number
  private readonly timeoutMs: number
  private readonly signal: AbortSignal | undefined

  constructor(u: typeof import('undici'), a: _AgentEntry, started: number, timeoutMs: number, signal: AbortSignal | undefined) {
    this.u = u
    this.a = a
    this.started = started
    this.timeoutMs = timeoutMs
    this.signal = signal
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller
    if (this.ended) controller.abort(new Error(this.ended))
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return // 1xx: the answer is still to come
    this.status = statusCode
    const retryAfter = statusCode === 429 || statusCode === 503 ? headers['retry-after'] : undefined
    if (typeof retryAfter === 'string') this.retryAfter = retryAfter
  }

  onResponseData(controller: Dispatcher.DispatchController, data: Buffer): void {
    if (this.settled) return
    if (this.keptBytes < RESPONSE_BODY_LIMIT) {
      const part = data.subarray(0, RESPONSE_BODY_LIMIT - this.keptBytes)
      this.kept.push(part)
      this.keptBytes += part.length
    }
    this.seen += data.length
    if (this.seen <= _DRAIN_LIMIT) return
    this._answered()
    controller.abort(new Error('response body past 64 KB: connection closed'))
  }

  onResponseEnd(): void {
    this._answered()
  }

  onResponseError(_c: Dispatcher.DispatchController | null, err: Error): void {
    if (this.settled) return
    // Shutdown: before any answer it was not an attempt at all; after the answer's headers, the answer counts.
    if (this.ended === 'aborted') return this._settle(this.status === null ? { ..._NOTHING, error: 'aborted', aborted: true } : { ..._NOTHING, responseCode: this.status })
    const timedOut = this.ended === 'timeout' || err instanceof this.u.errors.HeadersTimeoutError || err instanceof this.u.errors.BodyTimeoutError
    const error = timedOut ? `timeout after ${this.timeoutMs} ms` : _describe(err)
    // The status and headers arrived and the deadline cut the body off: the answer counts, as it
    // stands; a connection broken mid-body stays an error (docs/decisions/0040-answer-cut-off-by-the-deadline.md).
    if (timedOut && this.status !== null) return this._answered(`${error}: the response body was cut off`)
    this._settle({ ..._NOTHING, error })
  }

  /** The caller's signal: shutdown. */
  handleEvent(): void {
    this.end('aborted')
  }

  /** Ends the attempt from this side; settled at once, whether or not undici has started it. */
  end(why: 'timeout' | 'aborted'): void {
    if (this.settled || this.ended) return
    this.ended = why
    if (this.controller) this.controller.abort(new Error(why))
    // Not started yet (waiting for a connection), or undici did not report the abort: settled here.
    if (!this.settled) this.onResponseError(null, new Error(why))
  }

  /** The answer as it arrived: status, Retry-After, the kept body; `error` when its body did not end. */
  private _answered(error: string | null = null): void {
    if (this.settled) return
    // stream: true holds back a UTF-8 sequence cut in half by the limit instead of emitting U+FFFD
    const body = this.kept.length === 0 ? '' : new TextDecoder().decode(this.kept.length === 1 ? this.kept[0] : Buffer.concat(this.kept), { stream: this.seen > this.keptBytes })
    this._settle({ responseCode: this.status, durationMs: 0, error, responseBody: body, ...(this.retryAfter !== undefined ? { retryAfter: this.retryAfter } : {}) })
  }

  private _settle(result: SendResult): void {
    this.settled = true
    clearTimeout(this.timer)
    this.signal?.removeEventListener('abort', this)
    this.a.busy--
    this.a.used = Date.now()
    result.durationMs = Math.round(performance.now() - this.started)
    this.resolve(result)
  }
}

const _NOTHING: SendResult = { responseCode: null, durationMs: 0, error: null, responseBody: null }
const _noop = () => {}

function _onDeadline(x: _Exchange): void {
  x.end('timeout')
}

function _describe(err: unknown): string {
  if (err instanceof AggregateError && err.message === '') {
    const inner = [...new Set(err.errors.map(_describe))]
    return inner.join('; ') || 'connection failed'
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code
    return err.message || (typeof code === 'string' ? code : err.name)
  }
  return String(err)
}
