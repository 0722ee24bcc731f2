import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { issueLink, LINK_TTL_MS } from '../../src/modules/dashboard/sessions.ts'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'

// An Idempotency-Key keeps replays per API key. Signing in has no key yet, and a dashboard
// session is not one: every route either can reach answers 400 for the header, never a 500.

const IDEM = { 'idempotency-key': 'dash-1' }

describe('Idempotency-Key without an API key', () => {
  let app: TestApp
  let a: TestTenant

  before(async () => {
    app = await startTestApp()
    a = await app.tenant('Alpha Tours')
  })
  after(() => app.close())

  test('signing in with the header is a 400 with a bad token and with a good one; the good token stays unused', async () => {
    const bad = await app.request('POST', '/v1/dashboard/sessions', { body: { token: 'dl_' + 'x'.repeat(43) }, headers: IDEM })
    assert.equal(bad.status, 400, bad.text)
    assert.equal(bad.body.error.code, 'bad_request')
    const link = await issueLink(app.server.deps.db, a.id, LINK_TTL_MS, new Date())
    const good = await app.request('POST', '/v1/dashboard/sessions', { body: { token: link.token }, headers: IDEM })
    assert.equal(good.status, 400, good.text)
    assert.match(good.body.error.message, /Idempotency-Key/)
    const signIn = await app.request('POST', '/v1/dashboard/sessions', { body: { token: link.token } })
    assert.equal(signIn.status, 201, 'the refused request did not use the link')
  })

  test('every POST route a tenant\'s or the operator\'s session reaches answers the header with a 400', async () => {
    const tenant = await app.session(a.id)
    const operator = await app.session(null)
    const posts = app.server.routes.filter((r) => r.method === 'POST' && r.scope !== 'public')
    assert.ok(posts.length > 10, `${posts.length} POST routes`)
    let walked = 0
    for (const route of posts) {
      const path = route.path.replace(/:id/g, 'x_0190a0b0-0000-7000-8000-000000000000')
      for (const [who, s] of [['tenant', tenant], ['operator', operator]] as const) {
        const r = await s.request('POST', path, { body: {}, headers: IDEM, tenant: who === 'operator' ? a.id : undefined })
        assert.ok(r.status < 500, `${who} POST ${route.path}: ${r.status} ${r.text}`)
        if (r.status !== 403) {
          assert.equal(r.status, 400, `${who} POST ${route.path}: ${r.status} ${r.text}`)
          walked++
        }
      }
    }
    assert.ok(walked >= posts.length, `${walked} route/session pairs answered 400`)
  })
})
