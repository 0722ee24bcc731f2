import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { generateSecret, standardSignature, verifyStandardSignature } from '../../src/delivery/sign.ts'

// CONTRACT §16: a `whsec_` + base64 of 24–64 bytes secret keys the Standard Webhooks signature
// as the `standardwebhooks` library does given that string as it is; any other secret with its
// UTF-8 bytes (the library given `whsec_` + base64(secret)).

const ID = 'evt_0190a0b0-0000-7000-8000-000000000000'
const AT = 1_760_000_000
const BODY = '{"id":"evt_1","event":"order.created","data":{"name":"Zürich"}}'
const library = (secret: string) => new Webhook(secret).sign(ID, new Date(AT * 1000), BODY)
const utf8Form = (secret: string) => `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`

describe('the Standard Webhooks key of a secret', () => {
  it('decodes whsec_ + base64 of 24 to 64 bytes, padded or not, exactly as the library does', () => {
    for (let n = 24; n <= 64; n++) {
      for (let i = 0; i < 4; i++) {
        const b64 = randomBytes(n).toString('base64')
        for (const secret of [`whsec_${b64}`, `whsec_${b64.replace(/=+$/, '')}`]) {
          assert.equal(standardSignature(secret, ID, AT, BODY), library(secret), secret)
        }
      }
    }
  })

  it('keys any other secret with its UTF-8 bytes', () => {
    const others = [
      'standard-webhooks-secret-0123', 'whsec_0123456789abcdef', // 12 bytes: too short for the form
      `whsec_${randomBytes(23).toString('base64')}`, `whsec_${randomBytes(65).toString('base64')}`, // out of 24–64
      `whsec_${randomBytes(32).toString('base64url')}_-`, // not the standard alphabet
      `whsec_${randomBytes(32).toString('base64')} `, `whsec_${randomBytes(32).toString('base64')}===`,
      `WHSEC_${randomBytes(32).toString('base64')}`, 'ünïcödé secret with spaces ✓',
    ]
    for (const secret of others) assert.equal(standardSignature(secret, ID, AT, BODY), library(utf8Form(secret)), secret)
  })

  it('a generated secret is whsec_ + base64 of 32 random bytes, and the library takes it as is', () => {
    const a = generateSecret()
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/)
    assert.equal(Buffer.from(a.slice(6), 'base64').length, 32)
    assert.notEqual(generateSecret(), a)
    assert.equal(standardSignature(a, ID, AT, BODY), library(a))
  })

  it('verifyStandardSignature finds a matching v1 entry among several and refuses anything else', () => {
    const secret = generateSecret()
    const good = standardSignature(secret, ID, AT, BODY)
    assert.ok(verifyStandardSignature(secret, ID, AT, BODY, good))
    assert.ok(verifyStandardSignature(secret, ID, AT, Buffer.from(BODY), `v1,AAAA ${good}`))
    assert.ok(!verifyStandardSignature(secret, ID, AT + 1, BODY, good))
    assert.ok(!verifyStandardSignature(secret, ID, AT, `${BODY} `, good))
    assert.ok(!verifyStandardSignature(generateSecret(), ID, AT, BODY, good))
    assert.ok(!verifyStandardSignature(secret, ID, AT, BODY, good.replace('v1,', 'v2,')))
    assert.ok(!verifyStandardSignature(secret, ID, AT, BODY, ''))
  })
})
