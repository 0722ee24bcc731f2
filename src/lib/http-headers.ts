/**
 * Custom webhook headers (CONTRACT §7, §9, §16): what a subscription may ask us to send. The API
 * refuses anything else at create and PATCH; the sender checks stored rows again before
 * dispatch, so an old or hand-edited row fails only its own attempt; names that the API accepted
 * once and refuses now are left out instead (docs/decisions/0039-stored-refused-headers.md).
 */

/** RFC 9110 token: the characters a field name may have. */
const _TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** Printable ASCII without leading or trailing spaces (a single character may not be a space). */
const _VALUE = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/
const _CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'expect'])
/** Names that describe the connection, the message's framing or the path it came by: the sender's and proxies' to set. */
const _TRANSPORT = new Set(['host', 'cookie', 'forwarded'])
const _TRANSPORT_PREFIX = /^(?:content-|x-forwarded-)/

/**
 * The rules above as JSON Schema patterns (the OpenAPI document): a name is a token and not a
 * connection-specific name in any case (`refused`), a value printable ASCII without edge spaces.
 */
export const HEADER_PATTERNS = {
  name: _TOKEN.source,
  value: _VALUE.source,
  refused: anyCase(`^(${[..._CONNECTION_SPECIFIC].join('|')}|proxy-.*)$`),
}

/** A regular expression source whose letters match in either case (JSON Schema patterns have no `i` flag). */
export function anyCase(source: string): string {
  if (source.includes('\\')) throw new Error(`anyCase: ${source} has an escape, whose letter would change meaning`)
  return source.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`)
}

/** Why a header name cannot be sent, or null. (Names reserved by us are checked where they are known.) */
export function headerNameProblem(name: string): string | null {
  if (!_TOKEN.test(name)) return 'is not a valid header name (RFC 9110 token characters only)'
  return _refusedName(name.toLowerCase())
}

/** Why a header value cannot be sent, or null. */
export function headerValueProblem(value: string): string | null {
  if (!_VALUE.test(value)) return 'must be printable ASCII (0x20–0x7E) without leading or trailing spaces'
  return null
}

/**
 * A stored subscription's custom headers as the sender uses them: the names about the body, the
 * path or cookies (`Host`, `Content-*`, `Forwarded`, `X-Forwarded-*`, `Cookie`: the API accepted
 * some of them once) left out. The same object when none is (the usual case, nothing allocated);
 * a connection-specific or malformed name, or a bad value, stays, for outgoingHeaders() to refuse.
 */
export function sendableCustomHeaders(headers: Record<string, string>): Record<string, string> {
  let out: Record<string, string> | null = null
  for (const name in headers) {
    if (!_isTransport(name.toLowerCase())) continue
    out ??= { ...headers }
    delete out[name]
  }
  return out ?? headers
}

/**
 * The headers as sent (names in lower case), or the first problem of the set as
 * `header '<name>' …`. One pass, nothing allocated but the result: it runs on every attempt.
 */
export function outgoingHeaders(headers: Record<string, unknown>): Record<string, string> | string {
  const out: Record<string, string> = {}
  for (const name in headers) {
    const value = headers[name]
    const p = (_TOKEN.test(name) ? _connectionProblem(name.toLowerCase()) : 'is not a valid header name (RFC 9110 token characters only)') ??
      (typeof value === 'string' ? headerValueProblem(value) : 'must be a string')
    if (p) return `header '${name}' ${p}`
    out[name.toLowerCase()] = value as string
  }
  return out
}

function _refusedName(lower: string): string | null {
  const p = _connectionProblem(lower)
  if (p) return p
  if (_isTransport(lower)) return 'describes the connection, the body or the path it came by, and cannot be set'
  return null
}

const _isTransport = (lower: string) => _TRANSPORT.has(lower) || _TRANSPORT_PREFIX.test(lower)
const _connectionProblem = (lower: string) =>
  _CONNECTION_SPECIFIC.has(lower) || lower.startsWith('proxy-') ? 'is a connection-specific header and cannot be set' : null
