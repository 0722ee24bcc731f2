import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'

/** §12 API keys over the API: the CLI's key object, the secret once, the subset rule, revocation at once. */
describe('/v1/keys', () => {
  let app: TestApp
  let t: TestTenant
  before(async () => {
    app = await startTestApp()
    t = await app.tenant()
  })
  after(() => app.close())

  test('create shows the secret once; list and read never do; the new key works for its tenant', async () => {
    const r = await t.request('POST', '/v1/keys', { body: { name: 'website', expires_in: '12h', rate_limit: 500 } })
    assert.equal(r.status, 201, r.text)
    const k = r.body.data
    assert.match(k.key, /^tok_[A-Za-z0-9_-]{32}$/)
    assert.deepEqual(k.scopes, ['*'])
    assert.equal(k.prefix, k.key.slice(0, 12))
    assert.equal(k.rate_limit, 500)
    assert.equal(Date.parse(k.expires_at) - Date.parse(k.created_at), 12 * 3_600_000)
    assert.deepEqual(Object.keys(k).sort(), ['created_at', 'expires_at', 'id', 'key', 'last_used_at', 'name', 'prefix', 'rate_limit', 'revoked_at', 'scopes'])
    const one = await t.request('GET', `/v1/keys/${k.id}`)
    const list = await t.request('GET', '/v1/keys?limit=100')
    for (const reply of [one, list]) {
      assert.equal(reply.status, 200)
      assert.ok(!reply.text.includes(k.key) && !reply.text.includes('"key"'), 'no secret after create')
    }
    assert.ok(list.body.data.some((x: { id: string }) => x.id === k.id))
    const used = await t.request('GET', '/v1/orders', { key: k.key })
    assert.equal(used.status, 200)
    assert.equal(used.headers.get('x-tenant-id'), t.id)
    assert.equal(used.headers.get('x-ratelimit-limit'), '500')
  })

  test('a key creates only keys whose scopes it holds itself (403 naming the scope)', async () => {
    const narrow = await t.newKey({ scopes: ['orders:read', 'keys:write'] })
    const as = (key: string, scopes: string[]) => t.request('POST', '/v1/keys', { key, body: { scopes } })
    for (const scopes of [['orders:write'], ['*'], ['orders:*'], ['customers:read'], ['orders:read', 'webhooks:read']]) {
      const r = await as(narrow.key, scopes)
      assert.equal(r.status, 403, scopes.join(','))
      assert.equal(r.body.error.code, 'forbidden')
      assert.match(r.body.error.message, /cannot grant the scope '(orders:write|\*|orders:\*|customers:read|webhooks:read)'/)
    }
    assert.equal((await as(narrow.key, ['orders:read'])).status, 201)
    assert.equal((await as(narrow.key, ['keys:read', 'keys:write', 'keys:*'])).status, 201, 'write includes read, so keys:write holds keys:*')
    const ordersAll = await t.newKey({ scopes: ['orders:*', 'keys:*'] })
    assert.equal((await as(ordersAll.key, ['orders:write', 'orders:read'])).status, 201)
    const noKeys = await t.newKey({ scopes: ['orders:*'] })
    const denied = await as(noKeys.key, ['orders:read'])
    assert.equal(denied.status, 403)
    assert.match(denied.body.error.message, /keys:write/)
    assert.equal((await t.request('GET', '/v1/keys', { key: noKeys.key })).status, 403)
  })

  test('events:read is a scope (CONTRACT §15); events:write and events:* name nothing (422); minting it needs it', async () => {
    const r = await t.request('POST', '/v1/keys', { body: { scopes: ['events:read', 'orders:read'] } })
    assert.equal(r.status, 201, r.text)
    assert.deepEqual(r.body.data.scopes, ['events:read', 'orders:read'])
    for (const scope of ['events:write', 'events:*']) {
      const bad = await t.request('POST', '/v1/keys', { body: { scopes: [scope] } })
      assert.equal(bad.status, 422, scope)
      assert.equal(bad.body.error.details[0].path, 'scopes[0]')
      assert.match(bad.body.error.details[0].message, /events:read only/)
    }
    const noEvents = await t.newKey({ scopes: ['orders:*', 'keys:*'] })
    const denied = await t.request('POST', '/v1/keys', { key: noEvents.key, body: { scopes: ['events:read'] } })
    assert.equal(denied.status, 403)
    assert.match(denied.body.error.message, /events:read/)
    const events = await t.newKey({ scopes: ['events:read', 'keys:write'] })
    assert.equal((await t.request('POST', '/v1/keys', { key: events.key, body: { scopes: ['events:read'] } })).status, 201)
  })

  test('revoking answers the key with revoked_at; the next request with it is a 401 — the calling key too', async () => {
    const k = (await t.request('POST', '/v1/keys', { body: {} })).body.data
    assert.equal((await t.request('GET', '/v1/orders', { key: k.key })).status, 200)
    const r = await t.request('DELETE', `/v1/keys/${k.id}`)
    assert.equal(r.status, 200)
    assert.ok(r.body.data.revoked_at)
    assert.equal(r.body.data.id, k.id)
    assert.equal((await t.request('GET', '/v1/orders', { key: k.key })).status, 401)
    const self = (await t.request('POST', '/v1/keys', { body: {} })).body.data
    assert.equal((await t.request('DELETE', `/v1/keys/${self.id}`, { key: self.key })).status, 200)
    assert.equal((await t.request('GET', '/v1/keys', { key: self.key })).status, 401)
  })

  test('another tenant\'s keys are not found; bad bodies are 422 with their paths', async () => {
    const u = await app.tenant('Other')
    const theirs = (await u.request('POST', '/v1/keys', { body: {} })).body.data
    assert.equal((await t.request('GET', `/v1/keys/${theirs.id}`)).status, 404)
    assert.equal((await t.request('DELETE', `/v1/keys/${theirs.id}`)).status, 404)
    assert.ok(!(await t.request('GET', '/v1/keys?limit=100')).body.data.some((x: { id: string }) => x.id === theirs.id))
    assert.equal((await u.request('GET', '/v1/orders', { key: theirs.key })).status, 200, 'still works')
    const bad = await t.request('POST', '/v1/keys', { body: { scopes: ['orders:delete'], expires_in: '1y', rate_limit: 0, prefix: 'x', extra: 1 } })
    assert.equal(bad.status, 422)
    assert.deepEqual(bad.body.error.details.map((d: { path: string }) => d.path).sort(), ['expires_in', 'extra', 'prefix', 'rate_limit', 'scopes[0]'])
    assert.equal((await t.request('GET', '/v1/keys/key_nope')).status, 404)
  })
})

describe('/v1/keys with an Idempotency-Key', () => {
  let app: TestApp
  before(async () => {
    app = await startTestApp()
  })
  after(() => app.close())

  test('the stored replay never holds the secret: a repeat answers the key with "key": null', async () => {
    const t = await app.tenant()
    const headers = { 'Idempotency-Key': 'mint-once' }
    const first = await t.request('POST', '/v1/keys', { body: { name: 'ci' }, headers })
    assert.equal(first.status, 201)
    const secret = first.body.data.key as string
    assert.match(secret, /^tok_/)
    const stored = await app.server.deps.db.selectFrom('idempotency_keys').select('response').execute()
    assert.ok(stored.length > 0)
    for (const row of stored) assert.ok(!String(row.response).includes(secret), 'the secret is not stored')
    const again = await t.request('POST', '/v1/keys', { body: { name: 'ci' }, headers })
    assert.equal(again.status, 201)
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    assert.equal(again.body.data.id, first.body.data.id)
    assert.equal(again.body.data.key, null)
    assert.equal((await t.request('GET', '/v1/keys?limit=100')).body.data.filter((k: { name: string }) => k.name === 'ci').length, 1, 'one key made')
  })
})
