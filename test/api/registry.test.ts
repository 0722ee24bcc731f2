import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { RESOURCES, wholeScope } from '../../src/lib/scopes.ts'
import type { RouteDef } from '../../src/http/define-route.ts'
import { newId } from '../../src/lib/ids.ts'

/** A concrete URL for a route: well-formed ids for id parameters, a valid name for patterns. */
function urlFor(route: RouteDef): string {
  return route.path.replace(/:(\w+)/g, (_, name: string) => {
    const rule = route.params?.[name]
    if (typeof rule === 'string') return newId(rule)
    return 'destinations'
  })
}

describe('every /v1 route is guarded by the central authentication and scope check', () => {
  let app: TestApp
  let tenant: TestTenant
  before(async () => {
    app = await startTestApp()
    tenant = await app.tenant()
  })
  after(() => app.close())

  test('the registry is not empty and every non-public route declares a scope', () => {
    const routes = app.server.routes
    assert.ok(routes && routes.length > 5)
    // Public under /v1: this document, and signing in to the dashboard (its token is the credential).
    const publicRoutes = ['GET /v1/openapi.json', 'POST /v1/dashboard/sessions']
    for (const r of routes) if (r.path.startsWith('/v1/') && !publicRoutes.includes(`${r.method} ${r.path}`)) assert.notEqual(r.scope, 'public', `${r.method} ${r.path}`)
  })

  test('401 without a key, 401 with a revoked-looking key, 403 with a key lacking the scope', async () => {
    const routes = app.server.routes
    for (const route of routes) {
      if (route.scope === 'public') continue
      const scope = route.scope
      const url = urlFor(route)
      const body = route.method === 'POST' || route.method === 'PATCH' ? {} : undefined
      const none = await app.request(route.method, url, {})
      assert.equal(none.status, 401, `${route.method} ${url} without key`)
      assert.equal(none.body.error.code, 'unauthenticated')
      const bogus = await app.request(route.method, url, { key: 'tok_' + 'A'.repeat(32) })
      assert.equal(bogus.status, 401, `${route.method} ${url} with unknown key`)
      if (scope === 'all' || scope === 'session' || scope === 'operator') {
        // '*' itself: every resource's `:*` is not enough. A dashboard session's routes: no key is enough.
        const k = await tenant.newKey({ scopes: scope === 'all' ? RESOURCES.map(wholeScope) : ['*'] })
        const denied = await app.request(route.method, url, { key: k.key, body })
        assert.equal(denied.status, 403, `${route.method} ${url} with ${scope === 'all' ? 'every resource but not *' : 'a * key'}`)
        assert.match(denied.body.error.message, scope === 'all' ? /'\*'/ : /dashboard session/)
        continue
      }
      // A key with every scope except the one this route needs (same resource's read for writes).
      const others = RESOURCES.filter((r) => r !== scope.resource).map(wholeScope)
      if (scope.action === 'write') others.push(`${scope.resource}:read`)
      const k = await tenant.newKey({ scopes: others })
      const denied = await app.request(route.method, url, { key: k.key, body })
      assert.equal(denied.status, 403, `${route.method} ${url} without ${scope.resource}:${scope.action}`)
      assert.match(denied.body.error.message, new RegExp(`${scope.resource}:${scope.action}`))
    }
  })
})
