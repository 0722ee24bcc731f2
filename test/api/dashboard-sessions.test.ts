import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { issueLink, pruneSignIns, revokeSessions } from '../../src/modules/dashboard/sessions.ts'
import { orderBody, startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'

// CONTRACT §14 over HTTP: sign-in links, sessions, roles, tenancy, cross-origin refusals and the
// security headers. The browser tests (test/browser/) drive the same through Chromium.

const signIn = (app: TestApp, token: string) => app.request('POST', '/v1/dashboard/sessions', { body: { token } })

describe('dashboard sign-in and sessions', () => {
  let app: TestApp
  let a: TestTenant
  let b: TestTenant
  let orderA: string
  let orderB: string

  before(async () => {
    app = await startTestApp()
    a = await app.tenant('Alpha Tours')
    b = await app.tenant('Beta Cruises')
    orderA = (await a.request('POST', '/v1/orders', { body: orderBody() })).body.data.id
    orderB = (await b.request('POST', '/v1/orders', { body: orderBody() })).body.data.id
  })
  after(() => app.close())

  test('a link works once; a used, an expired and an unknown token are refused with 401 saying which', async () => {
    const db = app.server.deps.db
    const link = await issueLink(db, a.id, 60_000, new Date())
    const first = await signIn(app, link.token)
    assert.equal(first.status, 201)
    assert.equal(first.body.data.role, 'tenant')
    assert.equal(first.body.data.tenant_id, a.id)
    assert.equal(first.body.data.tenant_name, 'Alpha Tours')
    const cookie = first.headers.get('set-cookie')!
    assert.match(cookie, /^travelops_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/)
    const again = await signIn(app, link.token)
    assert.equal(again.status, 401)
    assert.match(again.body.error.message, /already been used/)
    assert.equal(again.headers.get('set-cookie'), null)
    const old = await issueLink(db, a.id, -1, new Date())
    const expired = await signIn(app, old.token)
    assert.equal(expired.status, 401)
    assert.match(expired.body.error.message, /expired/)
    const unknown = await signIn(app, 'dl_' + 'x'.repeat(43))
    assert.equal(unknown.status, 401)
    assert.match(unknown.body.error.message, /not valid/)
    const bad = await signIn(app, '')
    assert.equal(bad.status, 422)
  })

  test('a tenant session sees its tenant only, whatever tenant header it sends', async () => {
    const s = await app.session(a.id)
    const mine = await s.request('GET', `/v1/orders/${orderA}`)
    assert.equal(mine.status, 200)
    assert.equal(mine.headers.get('x-tenant-id'), a.id)
    assert.equal((await s.request('GET', `/v1/orders/${orderB}`)).status, 404)
    const switched = await s.request('GET', `/v1/orders/${orderB}`, { tenant: b.id })
    assert.equal(switched.status, 404)
    const list = await s.request('GET', '/v1/orders', { tenant: b.id })
    assert.deepEqual(list.body.data.map((o: { id: string }) => o.id), [orderA])
    assert.equal((await s.request('GET', '/v1/admin/tenants')).status, 403)
    // It may do what a `*` key may: create a key with every scope.
    const key = await s.request('POST', '/v1/keys', { body: { scopes: ['*'], name: 'from the dashboard' } })
    assert.equal(key.status, 201)
    assert.equal((await app.request('GET', `/v1/orders/${orderA}`, { key: key.body.data.key })).status, 200)
  })

  test('the operator session works on the tenant it names; without one, tenant routes answer 400', async () => {
    const op = await app.session(null)
    const none = await op.request('GET', '/v1/orders')
    assert.equal(none.status, 400)
    assert.match(none.body.error.message, /X-Travelops-Tenant/)
    const inB = await op.request('GET', `/v1/orders/${orderB}`, { tenant: b.id })
    assert.equal(inB.status, 200)
    assert.equal(inB.headers.get('x-tenant-id'), b.id)
    assert.equal((await op.request('GET', `/v1/orders/${orderA}`, { tenant: b.id })).status, 404)
    assert.equal((await op.request('GET', '/v1/orders', { tenant: 'ten_00000000-0000-7000-8000-000000000000' })).status, 404)
    assert.equal((await op.request('GET', '/v1/orders', { tenant: 'nonsense' })).status, 404)
    const tenants = await op.request('GET', '/v1/admin/tenants?limit=100')
    assert.equal(tenants.status, 200)
    const row = tenants.body.data.find((t: { id: string }) => t.id === a.id)
    assert.ok(row.keys >= 1)
    const created = await op.request('POST', '/v1/admin/tenants', { body: { name: '  Gamma  ' } })
    assert.equal(created.status, 201)
    assert.equal(created.body.data.name, 'Gamma')
    assert.equal((await op.request('POST', '/v1/admin/tenants', { body: { name: '' } })).status, 422)
    assert.equal((await op.request('GET', `/v1/admin/tenants/${created.body.data.id}`)).body.data.keys, 0)
  })

  test('another site cannot use the session: no dashboard header, a foreign Origin or Sec-Fetch-Site → 403', async () => {
    const s = await app.session(a.id)
    const host = new URL(app.url).host
    const plain = await app.request('POST', '/v1/orders', { body: orderBody(), headers: { cookie: s.cookie } })
    assert.equal(plain.status, 403)
    assert.match(plain.body.error.message, /x-requested-with/)
    const foreign = await s.request('POST', '/v1/orders', { body: orderBody(), headers: { origin: 'http://evil.example' } })
    assert.equal(foreign.status, 403)
    assert.match(foreign.body.error.message, /Cross-origin/)
    const otherPort = await s.request('GET', '/v1/orders', { headers: { origin: `http://${host.split(':')[0]}:1` } })
    assert.equal(otherPort.status, 403)
    const site = await s.request('GET', '/v1/orders', { headers: { 'sec-fetch-site': 'cross-site' } })
    assert.equal(site.status, 403)
    const same = await s.request('POST', '/v1/orders', { body: orderBody(), headers: { origin: `http://${host}`, 'sec-fetch-site': 'same-origin' } })
    assert.equal(same.status, 201)
    const list = await s.request('GET', '/v1/orders?limit=100')
    assert.equal(list.body.data.length, 2, 'only the same-origin POST created an order')
    const idem = await s.request('POST', '/v1/orders', { body: orderBody(), headers: { 'idempotency-key': 'k1' } })
    assert.equal(idem.status, 400)
  })

  test('signing out ends the session on the server; revoke ends a tenant\'s sessions and voids its links', async () => {
    const s = await app.session(a.id)
    const out = await s.request('DELETE', '/v1/dashboard/session')
    assert.equal(out.status, 200)
    assert.ok(out.body.data.ended_at)
    assert.match(out.headers.get('set-cookie')!, /^travelops_session=; .*Max-Age=0/)
    const after = await s.request('GET', '/v1/orders')
    assert.equal(after.status, 401)
    assert.match(after.body.error.message, /sign in again/)

    const sa = await app.session(a.id)
    const sb = await app.session(b.id)
    const unused = await issueLink(app.server.deps.db, a.id, 60_000, new Date())
    assert.ok(await revokeSessions(app.server.deps.engine, { tenantId: a.id }, new Date()) >= 1)
    assert.equal((await sa.request('GET', '/v1/orders')).status, 401)
    assert.equal((await sb.request('GET', '/v1/orders')).status, 200)
    assert.equal((await signIn(app, unused.token)).status, 401)
    await revokeSessions(app.server.deps.engine, { all: true }, new Date())
    assert.equal((await sb.request('GET', '/v1/orders')).status, 401)
  })

  test('POST /v1/dashboard/links: a * key gets a link for its tenant at the address it called; a narrower key 403', async () => {
    const r = await a.request('POST', '/v1/dashboard/links', { body: { expires_in: '1h' }, headers: { 'x-forwarded-proto': 'https' } })
    assert.equal(r.status, 201)
    const url = new URL(r.body.data.url)
    assert.equal(url.protocol, 'https:')
    assert.equal(url.host, new URL(app.url).host)
    assert.equal(url.pathname, '/dashboard/signin')
    const ms = Date.parse(r.body.data.expires_at) - Date.now()
    assert.ok(ms > 55 * 60_000 && ms <= 3600_000, String(ms))
    const session = await app.request('POST', '/v1/dashboard/sessions', { body: { token: url.hash.slice(1) }, headers: { 'x-forwarded-proto': 'https' } })
    assert.equal(session.body.data.tenant_id, a.id)
    assert.match(session.headers.get('set-cookie')!, /; Secure$/)
    const narrow = await a.newKey({ scopes: ['orders:*', 'webhooks:*', 'keys:*'] })
    const refused = await app.request('POST', '/v1/dashboard/links', { key: narrow.key, body: {} })
    assert.equal(refused.status, 403)
    assert.equal((await a.request('POST', '/v1/dashboard/links', { body: { expires_in: 'soon' } })).status, 422)
  })

  test('every answer forbids framing and carries a CSP; the dashboard page allows only its own scripts', async () => {
    for (const [path, key] of [['/v1/orders', a.key], ['/v1/nothing', a.key], ['/health', null], ['/v1/openapi.json', null]] as const) {
      const r = await app.request('GET', path, { key })
      assert.equal(r.headers.get('x-frame-options'), 'DENY', path)
      assert.match(r.headers.get('content-security-policy')!, /frame-ancestors 'none'/, path)
    }
    const page = await fetch(`${app.url}/dashboard/t/x/deliveries`)
    assert.equal(page.status, 200)
    const csp = page.headers.get('content-security-policy')!
    assert.match(csp, /script-src 'self'(;|$)/)
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/)
    assert.equal(page.headers.get('x-frame-options'), 'DENY')
    const html = await page.text()
    const script = /src="(\/dashboard\/assets\/app-[A-Z0-9]+\.js)"/.exec(html)![1]!
    assert.doesNotMatch(html, /<script>|<script type="module">[^<]/, 'no inline script')
    const js = await fetch(app.url + script)
    assert.equal(js.status, 200)
    assert.match(js.headers.get('content-type')!, /^text\/javascript/)
    assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable')
    await js.arrayBuffer()
    assert.equal((await fetch(`${app.url}/dashboard/assets/nope.js`)).status, 404)
    assert.equal((await fetch(`${app.url}/dashboard`, { method: 'POST' })).status, 405)
  })
})

describe('--no-dashboard', () => {
  let app: TestApp
  let t: TestTenant
  before(async () => {
    app = await startTestApp({ dashboard: false })
    t = await app.tenant()
  })
  after(() => app.close())

  test('no page, no sign-in, no session: /dashboard is a 404 and links are refused', async () => {
    const page = await app.request('GET', '/dashboard')
    assert.equal(page.status, 404)
    assert.equal(page.body.error.code, 'not_found')
    const link = await t.request('POST', '/v1/dashboard/links', { body: {} })
    assert.equal(link.status, 404)
    assert.match(link.body.error.message, /--no-dashboard/)
    const token = (await issueLink(app.server.deps.db, t.id, 60_000, new Date())).token
    assert.equal((await signIn(app, token)).status, 404)
  })
})

describe('pruning sign-ins', () => {
  test('links and sessions a day past their expiry are deleted; live ones stay', async () => {
    const app = await startTestApp()
    try {
      const t = await app.tenant()
      const db = app.server.deps.db
      const old = new Date(Date.now() - 3 * 86_400_000)
      await issueLink(db, t.id, 60_000, old)
      const live = await issueLink(db, t.id, 60_000, new Date())
      const s = await app.session(t.id)
      await db.updateTable('dashboard_sessions').set({ expires_at: old.toISOString() }).where('id', '=', s.id).execute()
      const s2 = await app.session(t.id)
      await pruneSignIns(db, new Date())
      const links = await db.selectFrom('dashboard_links').select('expires_at').execute()
      assert.equal(links.filter((l) => l.expires_at < new Date(Date.now() - 86_400_000).toISOString()).length, 0)
      assert.equal((await signIn(app, live.token)).status, 201)
      const sessions = await db.selectFrom('dashboard_sessions').select('id').execute()
      assert.ok(!sessions.some((r) => r.id === s.id))
      assert.ok(sessions.some((r) => r.id === s2.id))
    } finally {
      await app.close()
    }
  })
})
