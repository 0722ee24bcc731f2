import { Agent, buildConnector, errors, request } from 'undici'
import type { Dispatcher } from 'undici'
import { guardConnector, guardLookup, plainLookup, type ResolveAll } from './guard-connect.ts'

/** Bytes of the response body kept for the attempt log. */
export const RESPONSE_BODY_LIMIT = 4096
/** Bytes read past the kept prefix so the connection can be reused; beyond this it is closed. */
const _DRAIN_LIMIT = 64 * 1024

export type SendRequest = { url: string; body: string; headers: Record<string, string> }
export type SendResult = {
  /** HTTP status, or null when no complete response arrived in time. */
  responseCode: number | null
  durationMs: number
  error: string | null
  /** First 4 KB of the response body as text; null when there was no response. */
  responseBody: string | null
}
export type SenderOptions = {
  /** Deadline for the whole exchange: connect, request, response headers and body. */
  timeoutMs: number
  /** Skip the SSRF guard (`--allow-private-targets`). */
  allowPrivate: boolean
  userAgent: string
  /** Host name resolution (default: the system resolver); tests pass one that never leaves the machine. */
  resolve?: ResolveAll
}
export type Sender = {
  /** One delivery attempt. Never throws; redirects are not followed. */
  send(req: SendRequest): Promise<SendResult>
  /** Lets in-flight requests finish, then closes every connection. */
  close(): Promise<void>
}

/** The outgoing HTTP sender: one keep-alive undici Agent shared by every attempt. */
export function createSender(options: SenderOptions): Sender {
  const { timeoutMs, allowPrivate, userAgent, resolve } = options
  const base = buildConnector({
    timeout: Math.min(timeoutMs, 10_000),
    keepAlive: true,
    ...(allowPrivate ? (resolve ? { lookup: plainLookup(resolve) } : {}) : { lookup: guardLookup(resolve) }),
  })
  const agent = new Agent({
    connect: allowPrivate ? base : guardConnector(base),
    connections: 16, // per origin
    pipelining: 1, // one request at a time per connection, no head-of-line surprises
    allowH2: false,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    // undici's own timers only as a backstop: the AbortSignal below is the real deadline
    headersTimeout: timeoutMs + 1000,
    bodyTimeout: timeoutMs + 1000,
  })

  async function send(req: SendRequest): Promise<SendResult> {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const deadline = new AbortController()
    const timer = setTimeout(() => deadline.abort(new Error(`timeout after ${timeoutMs} ms`)), timeoutMs)
    try {
      const res = await request(req.url, {
        dispatcher: agent,
        method: 'POST',
        headers: _headers(req.headers, userAgent),
        body: req.body,
        signal: deadline.signal,
      })
      const responseBody = await _readPrefix(res.body)
      return { responseCode: res.statusCode, durationMs: elapsed(), error: null, responseBody }
    } catch (err) {
      const timedOut = deadline.signal.aborted || err instanceof errors.HeadersTimeoutError || err instanceof errors.BodyTimeoutError
      const error = timedOut ? `timeout after ${timeoutMs} ms` : _describe(err)
      return { responseCode: null, durationMs: elapsed(), error, responseBody: null }
    } finally {
      clearTimeout(timer)
    }
  }

  return { send, close: () => agent.close() }
}

function _headers(given: Record<string, string>, userAgent: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(given)) out[name.toLowerCase()] = value
  out['user-agent'] = userAgent
  return out
}

/** Reads the body to its end (so the connection can be reused), keeping the first 4 KB. */
async function _readPrefix(body: Dispatcher.ResponseData['body']): Promise<string> {
  const kept: Buffer[] = []
  let keptBytes = 0
  let seen = 0
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (keptBytes < RESPONSE_BODY_LIMIT) {
      const part = chunk.subarray(0, RESPONSE_BODY_LIMIT - keptBytes)
      kept.push(part)
      keptBytes += part.length
    }
    seen += chunk.length
    if (seen > _DRAIN_LIMIT) break // leaving the loop destroys the body and its connection
  }
  // stream: true holds back a UTF-8 sequence cut in half by the limit instead of emitting U+FFFD
  return new TextDecoder().decode(Buffer.concat(kept), { stream: seen > keptBytes })
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
