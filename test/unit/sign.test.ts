import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { describe, it } from 'node:test'
import { signPayload, verifySignature } from '../../src/delivery/sign.ts'

const secret = 'whsec_test_0123456789abcdef'
const body = '{"id":"evt_1","event":"order.created","data":{"total":12.5,"name":"Zürich"}}'
const expected = createHmac('sha256', secret).update(Buffer.from(body, 'utf8')).digest('hex')

describe('signPayload', () => {
  it('is the lower-case hex HMAC-SHA256 of the body bytes', () => {
    assert.equal(signPayload(secret, body), expected)
    assert.match(signPayload(secret, body), /^[0-9a-f]{64}$/)
  })

  it('gives the same result for the string and its UTF-8 bytes', () => {
    assert.equal(signPayload(secret, new TextEncoder().encode(body)), expected)
  })

  it('matches the RFC 4231 test case 2 vector', () => {
    assert.equal(
      signPayload('Jefe', 'what do ya want for nothing?'),
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    )
  })

  it('changes with the secret and with a single byte of the body', () => {
    assert.notEqual(signPayload('another secret value', body), expected)
    assert.notEqual(signPayload(secret, body + ' '), expected)
  })
})

describe('verifySignature', () => {
  it('accepts the bare hex signature', () => {
    assert.equal(verifySignature(secret, body, expected), true)
  })

  it('accepts the sha256= prefix, in any case', () => {
    assert.equal(verifySignature(secret, body, `sha256=${expected}`), true)
    assert.equal(verifySignature(secret, body, `SHA256=${expected}`), true)
  })

  it('accepts upper-case hex and surrounding whitespace', () => {
    assert.equal(verifySignature(secret, body, expected.toUpperCase()), true)
    assert.equal(verifySignature(secret, body, ` ${expected}\n`), true)
  })

  it('accepts a Uint8Array body', () => {
    assert.equal(verifySignature(secret, Buffer.from(body), expected), true)
  })

  it('refuses a wrong secret or a changed body', () => {
    assert.equal(verifySignature('not the right secret', body, expected), false)
    assert.equal(verifySignature(secret, body.replace('12.5', '12.6'), expected), false)
  })

  it('refuses a signature with one hex digit changed', () => {
    const last = expected.at(-1) === '0' ? '1' : '0'
    assert.equal(verifySignature(secret, body, expected.slice(0, -1) + last), false)
  })

  it('returns false, without throwing, for wrong lengths and garbage', () => {
    for (const sig of [
      '',
      'sha256=',
      expected.slice(0, -2),
      expected + '00',
      expected.slice(0, -1), // odd length
      'z'.repeat(64),
      `sha1=${expected}`,
      `sha256=sha256=${expected}`,
      Buffer.from(expected, 'hex').toString('base64'),
    ]) {
      assert.equal(verifySignature(secret, body, sig), false, `signature ${JSON.stringify(sig)}`)
    }
  })
})
