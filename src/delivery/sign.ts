import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

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
 * The Standard Webhooks signature (CONTRACT §11, §16): `v1,` + base64 of HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed with standardKey(secret) — what the
 * `standardwebhooks` and `svix` libraries check given a `whsec_` secret as it is, or any other
 * secret as `whsec_` + base64(secret).
 */
export function standardSignature(secret: string, id: string, timestamp: number, body: string | Uint8Array): string {
  return `v1,${createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.`).update(body).digest('base64')}`
}

/**
 * True when one of the space-separated `v1,<base64>` entries of a `webhook-signature` header is
 * standardSignature()'s for this id, timestamp and body; compared in constant time.
 */
export function verifyStandardSignature(secret: string, id: string, timestamp: number, body: string | Uint8Array, header: string): boolean {
  const expected = Buffer.from(standardSignature(secret, id, timestamp, body).slice(3), 'base64')
  let valid = false
  for (const entry of header.trim().split(/\s+/)) {
    if (!entry.startsWith('v1,')) continue
    const given = Buffer.from(entry.slice(3), 'base64')
    if (given.length === expected.length && timingSafeEqual(given, expected)) valid = true
  }
  return valid
}

// `whsec_` + standard base64 (padded or not) of 24–64 bytes: 32–88 characters after the prefix.
const _WHSEC = /^whsec_(?:[A-Za-z0-9+/]{4}){8,21}(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?|[A-Za-z0-9+/]{4})?$/

/**
 * The key of the Standard Webhooks signature (CONTRACT §16): a secret in the Standard Webhooks
 * form (`whsec_` + base64 of 24–64 bytes) keys it with the decoded bytes, as the libraries do
 * given that string as it is; any other secret with its UTF-8 bytes.
 */
export function standardKey(secret: string): string | Buffer {
  if (secret.length < 38 || secret.length > 94 || !_WHSEC.test(secret)) return secret
  const bytes = Buffer.from(secret.slice(6), 'base64')
  return bytes.length >= 24 && bytes.length <= 64 ? bytes : secret
}

/** A secret the service generates (CONTRACT §16): `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/**
 * The headers a delivery attempt of an event carries (CONTRACT §7, and §11's Standard Webhooks
 * ones), signed with `secret`; `attemptAt` (Unix seconds) is the attempt's time. The worker's
 * attempts (worker/attempt.ts) and `travelops listen` both send these.
 */
export function deliveryHeaders(event: { id: string; at: string; payload: string }, secret: string, attemptAt: number, userAgent: string): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': userAgent,
    // The envelope's id and timestamp are the event row's (events/emit.ts writes both).
    'X-Webhook-ID': event.id,
    'X-Webhook-Timestamp': event.at,
    'X-Webhook-Signature': signPayload(secret, event.payload),
    // Standard Webhooks (§11): the timestamp is this attempt's, so a receiver's replay window fits retries too.
    'webhook-id': event.id,
    'webhook-timestamp': String(attemptAt),
    'webhook-signature': standardSignature(secret, event.id, attemptAt, event.payload),
  }
}
