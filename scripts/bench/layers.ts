// The benchmark's `layers` figures: GET /v1/orders/:id taken apart, one layer per process, each
// loaded as the bare route is, so a run says where a GET's CPU goes and not only how much it is.
// Every variant answers what the real route answers (the floors are checked to, byte for byte),
// runs with serve's Node flags and, but the floors, logs at info to its stderr (a file, as
// serve's); no delivery worker.
//   same-response  a bare h3 route answering that body with those headers
//   middleware     travelops' app (request id, the guard, the route's parameter and query
//                  validation, the standard headers, the log line) on the real route's
//                  definition made public, its handler answering the order without the database
//   key-check      the same with the route's own scope: API-key authentication and the rate limit
//   full           the real app, database read included
//   floor          a bare h3 route doing only what no authenticated GET can skip: the key's hash,
//                  the database's version (revocation seen at once), the key row from a cache,
//                  the order's row by a prepared statement and its JSON; no middleware, no
//                  rate limit, no log line — the least a GET of travelops could cost here
//   floor-list     the same for GET /v1/orders?limit=20: the newest 21 rows by a prepared
//                  SELECT, 20 of them as JSON in the page's envelope with its cursor
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { H3, type H3Event } from 'h3'
import { toNodeHandler } from 'h3/node'
import { FastResponse } from 'srvx'
import { createApp } from '../../src/app.ts'
import { DEFAULT_CONFIG } from '../../src/config.ts'
import type { AppDeps } from '../../src/context.ts'
import { openDb, type OpenSqliteDb } from '../../src/db/connect.ts'
import type { OrderRow } from '../../src/db/schema.ts'
import { hashKey, looksLikeKey } from '../../src/modules/keys/service.ts'
import { orderJson } from '../../src/modules/orders/service.ts'
import type { RouteDef } from '../../src/http/define-route.ts'
import { encodeCursor } from '../../src/http/pagination.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { applyServeV8Flags } from '../../src/node-flags.ts'
import { send } from './child.ts'

const LAYERS = ['same-response', 'middleware', 'key-check', 'full', 'floor', 'floor-list'] as const
type Layer = (typeof LAYERS)[number]

async function main(): Promise<void> {
  const [layer, file, key, orderId] = process.argv.slice(2) as [Layer, string, string, string]
  if (!LAYERS.includes(layer) || !file || !key || !orderId) throw new Error(`usage: layers.ts <${LAYERS.join('|')}> <db file> <api key> <order id>`)
  const opened = openDb(file, { migrate: false })
  const deps: AppDeps = {
    db: opened.db, engine: 'sqlite', clock: systemClock, config: { ...DEFAULT_CONFIG, db: file, port: 0, logLevel: 'info' },
    logger: createLogger('info'), notify: () => {},
  }
  const real = createApp(deps)
  const probe = await real.fetch(new Request(`http://127.0.0.1/v1/orders/${orderId}`, { headers: { authorization: `Bearer ${key}` } }))
  const body = await probe.text()
  if (probe.status !== 200) throw new Error(`GET /v1/orders/${orderId}: ${probe.status} ${body}`)
  const headers: Record<string, string> = {}
  probe.headers.forEach((value, name) => { headers[name] = value })
  const order = (JSON.parse(body) as { data: unknown }).data
  const route = real.routes.find((r) => r.method === 'GET' && r.path === '/v1/orders/:id')!
  const answering: RouteDef = { ...route, handler: async () => order }
  const floor = layer === 'floor' || layer === 'floor-list'
  const h3 = floor ? _floor(opened.sqlite, layer === 'floor' ? 'one' : 'list', route.path, headers)
    : layer === 'same-response' ? new H3().get(route.path, () => new FastResponse(body, { status: 200, headers }))
    : layer === 'middleware' ? createApp(deps, [{ ...answering, scope: 'public' }]).h3
      : layer === 'key-check' ? createApp(deps, [answering]).h3
        : real.h3
  // A floor answers what the real route answers, byte for byte: it may leave work out, never content.
  if (floor) {
    const path = layer === 'floor' ? `/v1/orders/${orderId}` : '/v1/orders?limit=20'
    const ask = (app: { fetch(r: Request): Response | Promise<Response> }) => Promise.resolve(app.fetch(new Request(`http://127.0.0.1${path}`, { headers: { authorization: `Bearer ${key}` } }))).then((r) => r.text())
    const [want, got] = await Promise.all([ask(real), ask(h3)])
    if (got !== want) throw new Error(`the ${layer} layer answers GET ${path} otherwise than the real route:\n${got.slice(0, 300)}\n${want.slice(0, 300)}`)
  }
  const server = createServer({ keepAliveTimeout: 5_000 }, toNodeHandler(h3))
  server.listen(0, '127.0.0.1', () => {
    applyServeV8Flags() // as serve sets them once it listens
    send({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
  })
}

/**
 * The floor: what an authenticated GET of one order, or of the newest 20, cannot do without (see
 * the list above), straight on better-sqlite3, answered with the real route's headers.
 */
function _floor(sqlite: OpenSqliteDb['sqlite'], what: 'one' | 'list', path: string, real: Record<string, string>): H3 {
  const headers = Object.fromEntries(Object.entries(real).filter(([name]) => name !== 'content-length'))
  const version = sqlite.prepare('PRAGMA data_version').pluck()
  const keyRow = sqlite.prepare('SELECT * FROM api_keys WHERE key_hash = ?')
  const orderRow = sqlite.prepare('SELECT * FROM orders WHERE tenant_id = ? AND id = ?')
  const newest = sqlite.prepare('SELECT * FROM orders WHERE tenant_id = ? ORDER BY id DESC LIMIT ?')
  const keys = new Map<string, { tenant_id: string; revoked_at: string | null } | undefined>()
  let seen: unknown
  const answer = (event: H3Event): Response => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(event.req.headers.get('authorization') ?? '')
    if (!m || !looksLikeKey(m[1]!)) return new FastResponse('', { status: 401 })
    const v = version.get()
    if (v !== seen) {
      keys.clear()
      seen = v
    }
    const hash = hashKey(m[1]!)
    let key = keys.get(hash)
    if (!keys.has(hash)) keys.set(hash, (key = keyRow.get(hash) as typeof key))
    if (!key || key.revoked_at) return new FastResponse('', { status: 401 })
    if (what === 'one') {
      const row = orderRow.get(key.tenant_id, event.context.params!.id) as OrderRow | undefined
      if (!row) return new FastResponse('', { status: 404 })
      return new FastResponse(`{"data":${orderJson(row)}}`, { status: 200, headers })
    }
    const limit = Number(new URL(event.req.url).searchParams.get('limit') ?? 20)
    const rows = newest.all(key.tenant_id, limit + 1) as OrderRow[]
    const more = rows.length > limit
    const page = rows.slice(0, limit)
    const cursor = more ? JSON.stringify(encodeCursor(page[page.length - 1]!.id)) : 'null'
    return new FastResponse(`{"data":[${page.map(orderJson).join(',')}],"has_more":${more},"next_cursor":${cursor}}`, { status: 200, headers })
  }
  return what === 'one' ? new H3().get(path, answer) : new H3().get('/v1/orders', answer)
}

main().catch((err: unknown) => {
  process.stderr.write(`bench layers failed: ${String((err as Error)?.stack ?? err)}\n`)
  process.exit(1)
})
