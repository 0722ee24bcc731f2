import { createHmac, timingSafeEqual } from 'node:crypto'

const _HEX_SHA256 = /^[0-9a-f]{64}$/i
const _PREFIX = 'sha256='

/** Lower-case hex HMAC-SHA256 of the exact body bytes, keyed with the subscription secret. */
export function signPayload(secret: string, body: string | Uint8Array): string {
  return createHmac('sha256', secret).update(body).digest('hex')
}

/**
 * True when `signature` is the HMAC-SHA256 of `body` under `secret`.
 * Accepts bare hex or `sha256=<hex>`, hex in any case, surrounding whitespace ignored.
 * Anything malformed is simply `false`; the digest comparison runs in constant time.
 */
export function verifySignature(secret: string, body: string | Uint8Array, signature: string): boolean {
  let hex = signature.trim()
  if (hex.slice(0, _PREFIX.length).toLowerCase() === _PREFIX) hex = hex.slice(_PREFIX.length)
  if (!_HEX_SHA256.test(hex)) return false
  const given = Buffer.from(hex, 'hex')
  const expected = createHmac('sha256', secret).update(body).digest()
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/**
 * The Standard Webhooks signature (CONTRACT §11): `v1,` + base64 of HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the UTF-8 bytes of the secret — what
 * the `standardwebhooks` and `svix` libraries check when given `whsec_` + base64(secret).
 */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', secret).update(`${id}.${timestamp}.`).update(body).digest('base64')}`
}
