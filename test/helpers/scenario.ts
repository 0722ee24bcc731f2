import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type Reply, type TestApp, type TestTenant } from './app.ts'

/** What every scenario table gets: the app, a tenant with a `*` key, a second tenant, and whatever `setup` adds. */
export interface Fixture {
  app: TestApp
  tenant: TestTenant
  other: TestTenant
  /** Key of `tenant` with no scopes at all, for 403 rows. */
  unscopedKey: string
}

/**
 * One row of an API scenario table (PocketBase style): request, expected status, expected
 * error code, and any further checks on the reply. `path` and `body` may be functions of
 * the fixture so rows can name records made in `setup`.
 */
export interface Scenario<F extends Fixture> {
  name: string
  method: string
  path: string | ((f: F) => string)
  body?: unknown | ((f: F) => unknown)
  raw?: string
  headers?: Record<string, string>
  /** Whose key: the tenant's (default), the other tenant's, none, or the unscoped one. */
  as?: 'tenant' | 'other' | 'anonymous' | 'unscoped'
  status: number
  code?: string
  check?: (reply: Reply, f: F) => void | Promise<void>
}

export function scenarios<F extends Fixture>(
  title: string,
  setup: (base: Fixture) => Promise<F>,
  rows: Scenario<F>[],
): void {
  describe(title, () => {
    let f: F
    before(async () => {
      const app = await startTestApp()
      const tenant = await app.tenant('Owner')
      const other = await app.tenant('Other')
      const unscoped = await tenant.newKey({ scopes: [] })
      f = await setup({ app, tenant, other, unscopedKey: unscoped.key })
    })
    after(() => f.app.close())
    for (const row of rows) {
      test(`${row.method} ${typeof row.path === 'string' ? row.path : '…'} → ${row.status}: ${row.name}`, async () => {
        const path = typeof row.path === 'function' ? row.path(f) : row.path
        const body = typeof row.body === 'function' ? (row.body as (f: F) => unknown)(f) : row.body
        const key = { tenant: f.tenant.key, other: f.other.key, anonymous: null, unscoped: f.unscopedKey }[row.as ?? 'tenant']
        const reply = await f.app.request(row.method, path, { body, raw: row.raw, headers: row.headers, key })
        assert.equal(reply.status, row.status, `status (body: ${reply.text.slice(0, 400)})`)
        if (row.status >= 400) {
          assert.equal(typeof reply.body?.error?.message, 'string', 'error shape')
          assert.match(reply.body.error.request_id, /^req_/)
          assert.ok(Array.isArray(reply.body.error.details))
          if (row.code) assert.equal(reply.body.error.code, row.code)
        }
        await row.check?.(reply, f)
      })
    }
  })
}
