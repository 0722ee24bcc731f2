/**
 * Custom webhook headers (CONTRACT §9): what a subscription may ask us to send. The API
 * refuses anything else at create and PATCH; the sender checks stored rows again before
 * dispatch, so an old or hand-edited row fails only its own attempt.
 */

/** RFC 9110 token: the characters a field name may have. */
const _TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** Printable ASCII without leading or trailing spaces (a single character may not be a space). */
const _VALUE = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/
const _CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'expect'])

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
  const lower = name.toLowerCase()
  if (_CONNECTION_SPECIFIC.has(lower) || lower.startsWith('proxy-')) return 'is a connection-specific header and cannot be set'
  return null
}

/** Why a header value cannot be sent, or null. */
export function headerValueProblem(value: string): string | null {
  if (!_VALUE.test(value)) return 'must be printable ASCII (0x20–0x7E) without leading or trailing spaces'
  return null
}

/**
 * The headers as sent (names in lower case), or the first problem of the set as
 * `header '<name>' …`. One pass, nothing allocated but the result: it runs on every attempt.
 */
export function outgoingHeaders(headers: Record<string, unknown>): Record<string, string> | string {
  const out: Record<string, string> = {}
  for (const name in headers) {
    const value = headers[name]
    const p = headerNameProblem(name) ?? (typeof value === 'string' ? headerValueProblem(value) : 'must be a string')
    if (p) return `header '${name}' ${p}`
    out[name.toLowerCase()] = value as string
  }
  return out
}
