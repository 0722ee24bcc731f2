import type { Readable } from 'node:stream'
import type { Agent, Dispatcher } from 'undici'
import { headersProblem } from '../lib/http-headers.ts'
import { readStream } from '../lib/read-stream.ts'
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
  /** HTTP status, or null when no complete response arrived in time. */
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
 * 13 ms of serve's start-up that no request needs (BENCHMARKS.md, "Start-up").
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
  const agents = new Map<string, { agent: Agent; used: number; busy: number }>()
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

  const _agent = (u: typeof import('undici'), key: string) => {
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
          // undici's own timers only as a backstop: the AbortSignal below is the real deadline
          headersTimeout: timeoutMs + 1000,
          bodyTimeout: timeoutMs + 1000,
        }),
        used: 0,
        busy: 0,
      }
      agents.set(key, a)
    }
    a.used = Date.now()
    return a
  }

  async function send(req: SendRequest, signal?: AbortSignal): Promise<SendResult> {
    const u = _undici ?? (await _loadUndici())
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const refused = headersProblem(req.headers)
    if (refused) return { responseCode: null, durationMs: elapsed(), error: `${refused}: not sent`, responseBody: null }
    const deadline = new AbortController()
    const timer = setTimeout(() => deadline.abort(new Error(`timeout after ${timeoutMs} ms`)), timeoutMs)
    const stop = () => deadline.abort(new Error('aborted'))
    signal?.addEventListener('abort', stop, { once: true })
    const a = _agent(u, req.key ?? '')
    a.busy++
    let status: number | null = null
    try {
      const res = await u.request(req.url, {
        dispatcher: a.agent,
        method: 'POST',
        headers: _headers(req.headers, userAgent),
        body: req.body,
        signal: deadline.signal,
      })
      status = res.statusCode
      const responseBody = await _readPrefix(res.body)
      const retryAfter = status === 429 || status === 503 ? res.headers['retry-after'] : undefined
      return { responseCode: res.statusCode, durationMs: elapsed(), error: null, responseBody, ...(typeof retryAfter === 'string' ? { retryAfter } : {}) }
    } catch (err) {
      if (signal?.aborted && status === null) return { responseCode: null, durationMs: elapsed(), error: 'aborted', responseBody: null, aborted: true }
      // The receiver answered and the body was cut short by shutdown: its answer counts.
      if (signal?.aborted) return { responseCode: status, durationMs: elapsed(), error: null, responseBody: null }
      const timedOut = deadline.signal.aborted || err instanceof u.errors.HeadersTimeoutError || err instanceof u.errors.BodyTimeoutError
      const error = timedOut ? `timeout after ${timeoutMs} ms` : _describe(err)
      return { responseCode: null, durationMs: elapsed(), error, responseBody: null }
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', stop)
      a.busy--
      a.used = Date.now()
    }
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

function _headers(given: Record<string, string>, userAgent: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(given)) out[name.toLowerCase()] = value
  out['user-agent'] = userAgent
  return out
}

/** Reads the body to its end (so the connection can be reused), keeping the first 4 KB; past 64 KB it stops and destroys the body (and its connection). */
async function _readPrefix(body: Dispatcher.ResponseData['body']): Promise<string> {
  const stream = body as unknown as Readable
  const kept: Buffer[] = []
  let keptBytes = 0
  let seen = 0
  const read = await readStream(stream, (data) => {
    if (keptBytes < RESPONSE_BODY_LIMIT) {
      const part = data.subarray(0, RESPONSE_BODY_LIMIT - keptBytes)
      kept.push(part)
      keptBytes += part.length
    }
    seen += data.length
    return seen <= _DRAIN_LIMIT
  }, 'the response body ended early')
  if (read === 'stopped') stream.destroy()
  // stream: true holds back a UTF-8 sequence cut in half by the limit instead of emitting U+FFFD
  return new TextDecoder().decode(kept.length === 1 ? kept[0] : Buffer.concat(kept), { stream: seen > keptBytes })
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
