import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { newId } from '../../src/lib/ids.ts'
import { hashKey } from '../../src/modules/keys/service.ts'
import { MAX_KEYS_PER_TENANT } from '../../src/modules/keys/api.ts'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'

// CONTRACT §16 "Keys over the API": what a key may mint or end stays within its own bounds.

const HOUR = 3_600_000

describe('keys minted over the API stay within the minting key', () => {
  let app: TestApp
  let t: TestTenant
  before(async () => {
    app = await startTestApp({ rateLimit: 1000 })
    t = await app.tenant()
  })
  after(() => app.close())

  test('never a rate_limit above its own (403); an absent rate_limit is its own', async () => {
    const small = await t.newKey({ scopes: ['keys:write'], rateLimit: 10, expiresAt: new Date(Date.now() + HOUR) })
    const mint = (body: object) => t.request('POST', '/v1/keys', { key: small.key, body: { scopes: ['keys:read'], ...body } })
    for (const body of [{ rate_limit: 11 }, { rate_limit: 1_000_000_000 }, { rate_limit: null }]) {
      const r = await mint(body)
      assert.equal(r.status, 403, JSON.stringify(body))
      assert.equal(r.body.error.code, 'forbidden')
      assert.match(r.body.error.message, /rate_limit/)
    }
    assert.equal((await mint({ rate_limit: 10 })).body.data.rate_limit, 10)
    assert.equal((await mint({ rate_limit: 3 })).body.data.rate_limit, 3)
    const inherited = await mint({})
    assert.equal(inherited.status, 201)
    assert.equal(inherited.body.data.rate_limit, 10)
  })

  test('a key that follows --rate-limit mints up to it', async () => {
    const dflt = await t.newKey({ scopes: ['keys:write', 'keys:read'] })
    const mint = (body: object) => t.request('POST', '/v1/keys', { key: dflt.key, body: { scopes: ['keys:read'], ...body } })
    assert.equal((await mint({ rate_limit: 1001 })).status, 403)
    assert.equal((await mint({ rate_limit: 1000 })).status, 201)
    assert.equal((await mint({ rate_limit: null })).body.data.rate_limit, null)
  })

  test('never an expires_at after its own (403, null too); an absent expires_in ends with it', async () => {
    const expires = new Date(Date.now() + HOUR)
    const short = await t.newKey({ scopes: ['keys:write'], expiresAt: expires })
    const mint = (body: object) => t.request('POST', '/v1/keys', { key: short.key, body: { scopes: ['keys:write'], ...body } })
    for (const body of [{ expires_in: '2h' }, { expires_in: '61m' }, { expires_in: null }]) {
      const r = await mint(body)
      assert.equal(r.status, 403, JSON.stringify(body))
      assert.match(r.body.error.message, /expires/)
    }
    const ok = await mint({ expires_in: '30m' })
    assert.equal(ok.status, 201)
    assert.ok(ok.body.data.expires_at <= expires.toISOString())
    const inherited = await mint({})
    assert.equal(inherited.status, 201)
    assert.equal(inherited.body.data.expires_at, expires.toISOString())
    // …and what it minted is bounded the same way.
    const child = await t.request('POST', '/v1/keys', { key: inherited.body.data.key, body: { scopes: ['keys:write'], expires_in: null } })
    assert.equal(child.status, 403)
    const forever = await t.newKey({ scopes: ['keys:write'] })
    const any = await t.request('POST', '/v1/keys', { key: forever.key, body: { scopes: ['keys:read'], expires_in: '3650d' } })
    assert.equal(any.status, 201)
    assert.equal((await t.request('POST', '/v1/keys', { key: forever.key, body: { scopes: ['keys:read'] } })).body.data.expires_at, null)
  })

  test('a key revokes only keys whose scopes it holds itself (403 otherwise)', async () => {
    const narrow = await t.newKey({ scopes: ['keys:write', 'orders:read'] })
    const r = await t.request('DELETE', `/v1/keys/${t.keyId}`, { key: narrow.key })
    assert.equal(r.status, 403)
    assert.equal(r.body.error.code, 'forbidden')
    assert.match(r.body.error.message, /'\*'/)
    assert.equal((await t.request('GET', '/v1/orders')).status, 200, 'the * key still works')
    const wider = await t.newKey({ scopes: ['orders:write'] })
    assert.equal((await t.request('DELETE', `/v1/keys/${wider.id}`, { key: narrow.key })).status, 403)
    const reader = await t.newKey({ scopes: ['orders:read', 'keys:read'] })
    assert.equal((await t.request('DELETE', `/v1/keys/${reader.id}`, { key: narrow.key })).status, 200)
    assert.equal((await t.request('DELETE', `/v1/keys/${narrow.id}`, { key: narrow.key })).status, 200, 'itself')
    assert.equal((await t.request('DELETE', `/v1/keys/${wider.id}`)).status, 200, 'the * key ends any')
  })
})

describe('at most 1,000 unrevoked keys per tenant', () => {
  let app: TestApp
  before(async () => {
    app = await startTestApp()
  })
  after(() => app.close())

  /** Fills the tenant up to `count` unrevoked keys (its own key included) in one statement. */
  const fill = async (t: TestTenant, count: number) => {
    const now = new Date().toISOString()
    const rows = Array.from({ length: count - 1 }, () => {
      const key = 'tok_' + randomBytes(24).toString('base64url')
      return { id: newId('key'), tenant_id: t.id, name: null, key_hash: hashKey(key), key_prefix: key.slice(0, 12), scopes: '["orders:read"]', rate_limit: null, created_at: now, expires_at: null }
    })
    for (let i = 0; i < rows.length; i += 200) await app.server.deps.db.insertInto('api_keys').values(rows.slice(i, i + 200)).execute()
  }
  const unrevoked = async (tenantId: string) =>
    Number((await app.server.deps.db.selectFrom('api_keys').select((eb) => eb.fn.countAll().as('n'))
      .where('tenant_id', '=', tenantId).where('revoked_at', 'is', null).executeTakeFirstOrThrow()).n)

  test('the 1,001st is 422; revoking one makes room; revoked keys do not count', async () => {
    assert.equal(MAX_KEYS_PER_TENANT, 1000)
    const t = await app.tenant()
    await fill(t, 999)
    const last = await t.request('POST', '/v1/keys', { body: {} })
    assert.equal(last.status, 201)
    const over = await t.request('POST', '/v1/keys', { body: {} })
    assert.equal(over.status, 422, over.text)
    assert.equal(over.body.error.code, 'validation_failed')
    assert.match(over.body.error.message, /1,?000/)
    assert.equal(await unrevoked(t.id), 1000)
    assert.equal((await t.request('DELETE', `/v1/keys/${last.body.data.id}`)).status, 200)
    assert.equal((await t.request('POST', '/v1/keys', { body: {} })).status, 201)
    const other = await app.tenant('Other')
    assert.equal((await other.request('POST', '/v1/keys', { body: {} })).status, 201, 'per tenant')
  })

  test('concurrent mints never pass the bound', async () => {
    const t = await app.tenant()
    await fill(t, 990)
    const replies = await Promise.all(Array.from({ length: 30 }, () => t.request('POST', '/v1/keys', { body: { scopes: ['orders:read'] } })))
    const statuses = replies.map((r) => r.status).sort()
    assert.deepEqual(statuses, [...Array(10).fill(201), ...Array(20).fill(422)], statuses.join(','))
    assert.equal(await unrevoked(t.id), 1000)
  })
})
