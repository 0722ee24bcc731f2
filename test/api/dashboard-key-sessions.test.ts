import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { openSqlite } from '../../src/engine/sqlite/sqlite.ts'
import { startTestApp, type Reply, type TestApp, type TestTenant } from '../helpers/app.ts'
import { startServe, until } from '../helpers/cli.ts'
import { testEngine } from '../helpers/engine.ts'

// CONTRACT §16 "Dashboard sessions opened from a key's link": they end with that key, count
// against its rate limit and mint nothing beyond its bounds. The CLI's links stay the operator's.

const HOUR = 3_600_000

/** Signs in with a link minted by `key` (POST /v1/dashboard/links) and returns a request function as the dashboard page. */
async function signInFrom(app: TestApp, t: TestTenant, key: string, body: object = {}) {
  const link = await t.request('POST', '/v1/dashboard/links', { key, body })
  assert.equal(link.status, 201, link.text)
  return signInWith(app, link.body.data.url)
}

async function signInWith(app: TestApp, url: string) {
  const r = await app.request('POST', '/v1/dashboard/sessions', { body: { token: new URL(url).hash.slice(1) } })
  assert.equal(r.status, 201, r.text)
  const cookie = r.headers.get('set-cookie')!.split(';')[0]!
  return (method: string, path: string, body?: unknown): Promise<Reply> =>
    app.request(method, path, { body, key: null, headers: { cookie, 'x-requested-with': 'travelops-dashboard' } })
}

describe('dashboard sessions opened from a key\'s link', () => {
  let app: TestApp
  let t: TestTenant
  before(async () => {
    app = await startTestApp({ rateLimit: 1000 })
    t = await app.tenant()
  })
  after(() => app.close())

  test('revoking the key ends its sessions, and those opened from links they minted (401 on the next request)', async () => {
    const k = await t.newKey({ rateLimit: 50, expiresAt: new Date(Date.now() + HOUR) })
    const session = await signInFrom(app, t, k.key)
    assert.equal((await session('GET', '/v1/orders')).status, 200)
    const minted = await session('POST', '/v1/dashboard/links', {})
    assert.equal(minted.status, 201, minted.text)
    const second = await signInWith(app, minted.body.data.url)
    assert.equal((await second('GET', '/v1/orders')).status, 200)
    const unused = await session('POST', '/v1/dashboard/links', {})
    assert.equal((await t.request('DELETE', `/v1/keys/${k.id}`)).status, 200)
    for (const s of [session, second]) {
      const r = await s('GET', '/v1/orders')
      assert.equal(r.status, 401, r.text)
      assert.match(r.body.error.message, /revoked/)
    }
    const late = await app.request('POST', '/v1/dashboard/sessions', { body: { token: new URL(unused.body.data.url).hash.slice(1) } })
    assert.equal(late.status, 401, 'a link minted under a revoked key opens nothing')
  })

  test('the key\'s expiry ends its sessions', async () => {
    const k = await t.newKey({ expiresAt: new Date(Date.now() + HOUR) })
    const session = await signInFrom(app, t, k.key)
    assert.equal((await session('GET', '/v1/dashboard/session')).status, 200)
    await app.server.deps.engine.keysWrite(app.server.deps.db, (d) => d.updateTable('api_keys').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', k.id).execute())
    const r = await session('GET', '/v1/dashboard/session')
    assert.equal(r.status, 401)
    assert.match(r.body.error.message, /expired/)
  })

  test('they count against the key\'s rate limit and show it', async () => {
    const k = await t.newKey({ rateLimit: 5 })
    const session = await signInFrom(app, t, k.key) // the key's 1st request
    const first = await session('GET', '/v1/orders')
    assert.equal(first.headers.get('x-ratelimit-limit'), '5')
    assert.equal(first.headers.get('x-ratelimit-remaining'), '3')
    assert.equal((await t.request('GET', '/v1/orders', { key: k.key })).headers.get('x-ratelimit-remaining'), '2', 'one count for key and session')
    await session('GET', '/v1/orders')
    await session('GET', '/v1/orders')
    const over = await session('GET', '/v1/orders')
    assert.equal(over.status, 429)
    assert.equal((await t.request('GET', '/v1/orders', { key: k.key })).status, 429)
  })

  test('they mint nothing beyond the key: keys and links', async () => {
    const expires = new Date(Date.now() + HOUR)
    const k = await t.newKey({ rateLimit: 100, expiresAt: expires })
    const session = await signInFrom(app, t, k.key)
    for (const body of [{ rate_limit: 1_000_000_000 }, { rate_limit: null }, { expires_in: null }, { expires_in: '2h' }]) {
      const r = await session('POST', '/v1/keys', body)
      assert.equal(r.status, 403, `${JSON.stringify(body)}: ${r.text}`)
    }
    const ok = await session('POST', '/v1/keys', {})
    assert.equal(ok.status, 201, ok.text)
    assert.equal(ok.body.data.rate_limit, 100)
    assert.equal(ok.body.data.expires_at, expires.toISOString())
    const link = await session('POST', '/v1/dashboard/links', { expires_in: '2h' })
    assert.equal(link.status, 403, link.text)
    const fromLink = await signInWith(app, (await session('POST', '/v1/dashboard/links', {})).body.data.url)
    assert.equal((await fromLink('POST', '/v1/keys', { rate_limit: 101 })).status, 403)
  })

  test('the CLI\'s links stay the operator\'s: unbounded, the session\'s own rate limit', async () => {
    const s = await app.session(t.id)
    const r = await s.request('POST', '/v1/keys', { body: { rate_limit: 1_000_000_000, expires_in: null } })
    assert.equal(r.status, 201, r.text)
    assert.equal(r.headers.get('x-ratelimit-limit'), '10000')
  })

  test('revoked by another writer (another serve on PostgreSQL, another connection on SQLite): 401', async () => {
    const k = await t.newKey()
    const session = await signInFrom(app, t, k.key)
    assert.equal((await session('GET', '/v1/orders')).status, 200)
    if (testEngine() === 'postgres') {
      const other = await startServe(['--db', app.dbFile, '--log-level', 'error'])
      try {
        const r = await fetch(`${other.url}/v1/keys/${k.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${t.key}` } })
        assert.equal(r.status, 200)
      } finally {
        await other.stop()
      }
      // CONTRACT §10: a revoked key stops working within 1 s at every process.
      await until('the session refused', async () => (await session('GET', '/v1/orders')).status === 401, 1000)
    } else {
      const other = openSqlite(app.dbFile)
      try {
        other.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?').run(new Date().toISOString(), k.id)
      } finally {
        other.close()
      }
      assert.equal((await session('GET', '/v1/orders')).status, 401)
    }
  })
})
