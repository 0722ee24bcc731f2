import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEFAULT_CONFIG, type Config } from '../../src/config.ts'
import { newPgDatabase, testEngine } from './engine.ts'
import { createKey } from '../../src/modules/keys/service.ts'
import { issueLink, LINK_TTL_MS } from '../../src/modules/dashboard/sessions.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { startServer, type RunningServer, type StartOptions } from '../../src/server.ts'
import { offlineResolve } from './offline-dns.ts'

export interface Reply {
  status: number
  headers: Headers
  body: any
  text: string
}

export interface TestTenant {
  id: string
  key: string
  keyId: string
  /** A request as this tenant's key (`key: null` sends none, a string sends that). */
  request(method: string, path: string, opts?: RequestOpts): Promise<Reply>
  /** A key of this tenant with other scopes or limits. */
  newKey(opts?: { scopes?: string[]; rateLimit?: number; expiresAt?: Date }): Promise<{ key: string; id: string }>
}

export interface RequestOpts {
  body?: unknown
  /** Sent as is, with no JSON encoding. */
  raw?: string | Uint8Array
  headers?: Record<string, string>
  key?: string | null
}

/** A signed-in dashboard browser, as the dashboard's own page sends its requests. */
export interface TestSession {
  id: string
  /** `travelops_session=…` */
  cookie: string
  /** A request with the cookie and the dashboard's header; `tenant` names the operator's tenant. */
  request(method: string, path: string, opts?: RequestOpts & { tenant?: string }): Promise<Reply>
}

export interface TestApp {
  url: string
  dir: string
  dbFile: string
  server: RunningServer
  tenant(name?: string): Promise<TestTenant>
  /** Signs in with a fresh link: the operator's (no tenant) or a tenant's. */
  session(tenantId?: string | null): Promise<TestSession>
  request(method: string, path: string, opts?: RequestOpts): Promise<Reply>
  close(): Promise<void>
}

/** A real `serve` (in-process) on 127.0.0.1 with a fresh SQLite file in a temp directory; it resolves no host names. `start` gives it a logger of the test's, say. */
export async function startTestApp(overrides: Partial<Config> = {}, start: Omit<StartOptions, 'resolve'> = {}): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'travelops-test-'))
  const dbFile = testEngine() === 'postgres' ? await newPgDatabase() : join(dir, 'travelops.db')
  const server = await startServer({ ...DEFAULT_CONFIG, db: dbFile, port: 0, logLevel: 'silent', ...overrides }, { ...start, resolve: offlineResolve })
  const { db } = server.deps

  const request = async (method: string, path: string, opts: RequestOpts = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...opts.headers }
    if (opts.key) headers.authorization = `Bearer ${opts.key}`
    let body: string | Uint8Array | undefined = opts.raw
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body)
      headers['content-type'] ??= 'application/json'
    }
    const res = await _fetch(server.url + path, { method, headers, body })
    const text = await res.text()
    let parsed: unknown
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      parsed = undefined
    }
    return { status: res.status, headers: res.headers, body: parsed, text }
  }

  const tenant = async (name = 'Tenant'): Promise<TestTenant> => {
    const t = await createTenant(db, name, new Date())
    const newKey = async (o: { scopes?: string[]; rateLimit?: number; expiresAt?: Date } = {}) => {
      const k = await createKey(server.deps.engine, { tenantId: t.id, scopes: o.scopes ?? ['*'], rateLimit: o.rateLimit, expiresAt: o.expiresAt }, new Date())
      return { key: k.key, id: k.id }
    }
    const main = await newKey()
    return {
      id: t.id,
      key: main.key,
      keyId: main.id,
      newKey,
      request: (method, path, opts = {}) => request(method, path, { ...opts, key: opts.key === undefined ? main.key : opts.key }),
    }
  }

  const session = async (tenantId: string | null = null): Promise<TestSession> => {
    const link = await issueLink(db, tenantId, LINK_TTL_MS, new Date())
    const r = await request('POST', '/v1/dashboard/sessions', { body: { token: link.token } })
    if (r.status !== 201) throw new Error(`sign-in failed: ${r.status} ${r.text}`)
    const cookie = r.headers.get('set-cookie')!.split(';')[0]!
    return {
      id: r.body.data.id, cookie,
      request: (method, path, opts = {}) => request(method, path, {
        ...opts,
        headers: { cookie, 'x-requested-with': 'travelops-dashboard', ...(opts.tenant ? { 'x-travelops-tenant': opts.tenant } : {}), ...opts.headers },
      }),
    }
  }

  return {
    url: server.url, dir, dbFile, server, tenant, session, request,
    close: async () => {
      await server.stop(1000)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A valid order body; `over` replaces fields. */
export function orderBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
    items: [{ description: 'Fjord cruise', quantity: 2, unitPrice: 149.5 }],
    currency: 'EUR',
    travelDate: '2027-06-01',
    ...over,
  }
}

/**
 * fetch, sent once more if the connection it reused was closed before the request reached the
 * server (ECONNRESET on an idle keep-alive socket: after a test spent seconds in synchronous
 * work, the client's keep-alive timer could not run while the server's did). Browsers do the same.
 */
async function _fetch(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init)
  } catch (err) {
    if ((err as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw err
    return fetch(url, init)
  }
}
