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
//   floor-post     the same for POST /v1/orders on a database of its own whose tenant has two
//                  subscriptions: the body parsed (not validated), the counter, the order, its
//                  event and a delivery per subscription written by prepared statements, the
//                  requests of one event-loop turn in one transaction (no savepoints), answered
//                  201 with the order's JSON
//   pg-floor, pg-floor-list  `floor` and `floor-list` on PostgreSQL (the database argument its
//                  URL): the key row kept for a second (§10 lets a revocation take that long),
//                  each request one prepared statement on one of four connections of
//                  node-postgres, as serve's pool prepares them
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { H3, type H3Event } from 'h3'
import { toNodeHandler } from 'h3/node'
import { FastResponse } from 'srvx'
import { createApp } from '../../src/app.ts'
import { DEFAULT_CONFIG } from '../../src/config.ts'
import type { AppDeps } from '../../src/context.ts'
import { type OpenSqliteDb } from '../../src/engine/port.ts'
import { openDatabase } from '../../src/engine/open.ts'
import { openDb } from '../../src/engine/sqlite/open.ts'
import { openPostgres } from '../../src/engine/postgres/pool.ts'
import type { OrderRow } from '../../src/db/schema.ts'
import type { RouteDef } from '../../src/http/define-route.ts'
import { encodeCursor } from '../../src/http/pagination.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { newId } from '../../src/lib/ids.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { toMetadataJson } from '../../src/modules/fields.ts'
import { hashKey, looksLikeKey } from '../../src/modules/keys/service.ts'
import type { OrderCustomerValue } from '../../src/modules/orders/schema.ts'
import { customerJson, orderJson } from '../../src/modules/orders/service.ts'
import { applyServeV8Flags } from '../../src/node-flags.ts'
import { send } from './child.ts'
import { ORDER_BODY } from './seed.ts'

/** The real app or a layer's h3, asked in-process. */
type Fetching = { fetch(r: Request): Response | Promise<Response> }

const LAYERS = ['same-response', 'middleware', 'key-check', 'full', 'floor', 'floor-list', 'floor-post', 'pg-floor', 'pg-floor-list'] as const
type Layer = (typeof LAYERS)[number]

async function main(): Promise<void> {
  const [layer, file, key, orderId] = process.argv.slice(2) as [Layer, string, string, string]
  if (!LAYERS.includes(layer) || !file || !key || !orderId) throw new Error(`usage: layers.ts <${LAYERS.join('|')}> <db file, or PostgreSQL URL for pg-*> <api key> <order id>`)
  const pg = layer.startsWith('pg-')
  const opened = pg ? await openDatabase(file) : openDb(file, { migrate: false })
  const deps: AppDeps = {
    db: opened.db, engine: opened.engine, clock: systemClock, config: { ...DEFAULT_CONFIG, db: file, port: 0, logLevel: 'info' },
    logger: createLogger('info'), notify: () => {},
  }
  const real = createApp(deps)
  const post = layer === 'floor-post'
  const ask = async (app: Fetching, path: string) => app.fetch(new Request(`http://127.0.0.1${path}`, post
    ? { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: ORDER_BODY }
    : { headers: { authorization: `Bearer ${key}` } }))
  const probe = await ask(real, post ? '/v1/orders' : `/v1/orders/${orderId}`)
  const body = await probe.text()
  if (probe.status !== (post ? 201 : 200)) throw new Error(`${post ? 'POST /v1/orders' : `GET /v1/orders/${orderId}`}: ${probe.status} ${body}`)
  const headers: Record<string, string> = {}
  probe.headers.forEach((value, name) => { headers[name] = value })
  const order = (JSON.parse(body) as { data: unknown }).data
  const route = real.routes.find((r) => r.method === 'GET' && r.path === '/v1/orders/:id')!
  const answering: RouteDef = { ...route, handler: async () => order }
  const floor = layer.includes('floor')
  const one = layer === 'floor' || layer === 'pg-floor'
  const h3 = post ? _floorPost(opened.sqlite!, headers)
    : pg ? await _pgFloor(file, one ? 'one' : 'list', route.path, headers)
    : floor ? _floor(opened.sqlite!, one ? 'one' : 'list', route.path, headers)
    : layer === 'same-response' ? new H3().get(route.path, () => new FastResponse(body, { status: 200, headers }))
    : layer === 'middleware' ? createApp(deps, [{ ...answering, scope: 'public' }]).h3
      : layer === 'key-check' ? createApp(deps, [answering]).h3
        : real.h3
  // A floor answers what the real route answers, byte for byte: it may leave work out, never content.
  // A POST's answer and writes: the same but for the new order's id, number and times.
  if (floor) {
    const path = one ? `/v1/orders/${orderId}` : post ? '/v1/orders' : '/v1/orders?limit=20'
    const counts = post ? opened.sqlite!.prepare('SELECT (SELECT count(*) FROM orders), (SELECT count(*) FROM events), (SELECT count(*) FROM deliveries)').raw() : undefined
    const answer = async (app: Fetching) => {
      if (!counts) return (await ask(app, path)).text()
      const before = counts.get() as number[]
      const text = await (await ask(app, path)).text()
      const written = (counts.get() as number[]).map((n, i) => n - before[i]!)
      return `orders, events, deliveries written: ${written.join(', ')}; ${_volatileOut(text)}`
    }
    const want = await answer(real)
    const got = await answer(h3)
    if (got !== want) throw new Error(`the ${layer} layer answers ${post ? 'POST' : 'GET'} ${path} otherwise than the real route:\n${got}\n${want}`)
  }
  const server = createServer({ keepAliveTimeout: 5_000 }, toNodeHandler(h3))
  server.listen(0, '127.0.0.1', () => {
    applyServeV8Flags() // as serve sets them once it listens
    send({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
  })
}

/** The hash of the request's API key (`Authorization: Bearer …`), or null when it has none that looks like one. */
function _keyHash(event: H3Event): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(event.req.headers.get('authorization') ?? '')
  return m && looksLikeKey(m[1]!) ? hashKey(m[1]!) : null
}

/**
 * What every floor does first: the key's hash, the database's version (a key revoked by another
 * process is seen at once), the key row from a cache kept while that version holds.
 */
function _authorizer(sqlite: OpenSqliteDb['sqlite']): (event: H3Event) => string | null {
  const version = sqlite.prepare('PRAGMA data_version').pluck()
  const keyRow = sqlite.prepare('SELECT * FROM api_keys WHERE key_hash = ?')
  const keys = new Map<string, { tenant_id: string; revoked_at: string | null } | undefined>()
  let seen: unknown
  return (event) => {
    const hash = _keyHash(event)
    if (!hash) return null
    const v = version.get()
    if (v !== seen) {
      keys.clear()
      seen = v
    }
    let key = keys.get(hash)
    if (!keys.has(hash)) keys.set(hash, (key = keyRow.get(hash) as typeof key))
    return key && !key.revoked_at ? key.tenant_id : null
  }
}

const _withoutLength = (real: Record<string, string>) => Object.fromEntries(Object.entries(real).filter(([name]) => name !== 'content-length'))

/**
 * The floor: what an authenticated GET of one order, or of the newest 20, cannot do without (see
 * the list above), straight on better-sqlite3, answered with the real route's headers.
 */
function _floor(sqlite: OpenSqliteDb['sqlite'], what: 'one' | 'list', path: string, real: Record<string, string>): H3 {
  const headers = _withoutLength(real)
  const tenantOf = _authorizer(sqlite)
  const orderRow = sqlite.prepare('SELECT * FROM orders WHERE tenant_id = ? AND id = ?')
  const newest = sqlite.prepare('SELECT * FROM orders WHERE tenant_id = ? ORDER BY id DESC LIMIT ?')
  const answer = (event: H3Event): Response => {
    const tenant = tenantOf(event)
    if (!tenant) return new FastResponse('', { status: 401 })
    if (what === 'one') {
      const row = orderRow.get(tenant, event.context.params!.id) as OrderRow | undefined
      if (!row) return new FastResponse('', { status: 404 })
      return new FastResponse(`{"data":${orderJson(row)}}`, { status: 200, headers })
    }
    const limit = Number(new URL(event.req.url).searchParams.get('limit') ?? 20)
    return new FastResponse(_pageJson(newest.all(tenant, limit + 1) as OrderRow[], limit), { status: 200, headers })
  }
  return what === 'one' ? new H3().get(path, answer) : new H3().get('/v1/orders', answer)
}

interface _OrderBody {
  customer: OrderCustomerValue
  items: { productId?: string | null; description: string; quantity: number; unitPrice: number }[]
  currency: string
  travelDate?: string
  notes?: string
  metadata?: Record<string, string>
}

/** The floor of POST /v1/orders (see the list above): group commit by hand, nothing checked but the key. */
function _floorPost(sqlite: OpenSqliteDb['sqlite'], real: Record<string, string>): H3 {
  const headers = _withoutLength(real)
  const tenantOf = _authorizer(sqlite)
  const counter = sqlite.prepare(`INSERT INTO counters (tenant_id, name, value) VALUES (?, 'order', 1)
    ON CONFLICT (tenant_id, name) DO UPDATE SET value = value + 1 RETURNING value`).pluck()
  const insertOrder = sqlite.prepare(`INSERT INTO orders (id, tenant_id, order_number, status, customer_id, customer, items, total, currency,
    travel_date, notes, metadata, created_at, updated_at) VALUES (@id, @tenant_id, @order_number, @status, @customer_id, @customer, @items,
    @total, @currency, @travel_date, @notes, @metadata, @created_at, @updated_at)`)
  const insertEvent = sqlite.prepare('INSERT INTO events (id, tenant_id, name, payload, created_at) VALUES (?, ?, ?, ?, ?)')
  const insertDelivery = sqlite.prepare(`INSERT INTO deliveries (id, tenant_id, webhook_id, event_id, event, status, attempts, retries, manual, created_at, due_at)
    VALUES (?, ?, ?, ?, 'order.created', 'pending', 0, 0, 0, ?, ?)`)
  const activeWebhooks = sqlite.prepare('SELECT id, events FROM webhooks WHERE tenant_id = ? AND active = 1 AND deleted_at IS NULL ORDER BY id')
  const webhooksOf = new Map<string, string[]>()
  const webhooks = (tenant: string) => {
    let ids = webhooksOf.get(tenant)
    if (!ids) {
      const all = activeWebhooks.all(tenant) as { id: string; events: string }[]
      webhooksOf.set(tenant, (ids = all.filter((w) => /"(order\.created|\*)"/.test(w.events)).map((w) => w.id)))
    }
    return ids
  }
  const write = (tenant: string, input: _OrderBody): string => {
    const now = new Date().toISOString()
    const items = input.items.map((i) => ({ productId: i.productId ?? null, description: i.description, quantity: i.quantity, unitPrice: Math.round(i.unitPrice * 100) }))
    const row: OrderRow = {
      id: newId('ord'), tenant_id: tenant, order_number: `ORD-${String(counter.get(tenant)).padStart(6, '0')}`, status: 'pending', customer_id: null,
      customer: customerJson(input.customer), items: JSON.stringify(items), total: items.reduce((sum, i) => sum + i.unitPrice * i.quantity, 0),
      currency: input.currency, travel_date: input.travelDate ?? null, notes: input.notes ?? null,
      metadata: toMetadataJson(input.metadata), created_at: now, updated_at: now,
    }
    insertOrder.run(row)
    const json = orderJson(row)
    const event = newId('evt')
    insertEvent.run(event, tenant, 'order.created', `{"id":"${event}","event":"order.created","timestamp":"${now}","tenant_id":"${tenant}","data":${json}}`, now)
    for (const webhook of webhooks(tenant)) insertDelivery.run(newId('del'), tenant, webhook, event, now, now)
    return `{"data":${json}}`
  }
  let queue: { tenant: string; input: _OrderBody; answer: (r: Response) => void }[] = []
  const commit = sqlite.transaction((batch: typeof queue) => batch.map((m) => write(m.tenant, m.input)))
  const flush = () => {
    const batch = queue
    queue = []
    const bodies = commit.immediate(batch)
    batch.forEach((m, i) => m.answer(new FastResponse(bodies[i]!, { status: 201, headers })))
  }
  return new H3().post('/v1/orders', async (event) => {
    const tenant = tenantOf(event)
    if (!tenant) return new FastResponse('', { status: 401 })
    const input = JSON.parse(await event.req.text()) as _OrderBody
    return new Promise<Response>((answer) => {
      if (queue.length === 0) setImmediate(flush)
      queue.push({ tenant, input, answer })
    })
  })
}

/** `floor` and `floor-list` on PostgreSQL (see the list above). */
async function _pgFloor(url: string, what: 'one' | 'list', path: string, real: Record<string, string>): Promise<H3> {
  const headers = _withoutLength(real)
  const { pool } = openPostgres(url, { max: 4, applicationName: 'travelops-bench-floor' })
  // Clients of our own (a pool's query() would send its statements unnamed: src/engine/postgres/pool.ts).
  const clients = await Promise.all(Array.from({ length: 4 }, () => pool.connect()))
  let next = 0
  const query = async <R>(text: string, values: unknown[]): Promise<R[]> => (await clients[next++ % clients.length]!.query(text, values)).rows as R[]
  const keys = new Map<string, { tenant: string | null; at: number }>()
  const tenantOf = async (event: H3Event): Promise<string | null> => {
    const hash = _keyHash(event)
    if (!hash) return null
    const now = performance.now()
    let key = keys.get(hash)
    if (!key || now - key.at > 1000) {
      const [row] = await query<{ tenant_id: string; revoked_at: string | null }>('SELECT tenant_id, revoked_at FROM api_keys WHERE key_hash = $1', [hash])
      keys.set(hash, (key = { tenant: row && !row.revoked_at ? row.tenant_id : null, at: now }))
    }
    return key.tenant
  }
  const answer = async (event: H3Event): Promise<Response> => {
    const tenant = await tenantOf(event)
    if (!tenant) return new FastResponse('', { status: 401 })
    if (what === 'one') {
      const [row] = await query<OrderRow>('SELECT * FROM orders WHERE tenant_id = $1 AND id = $2', [tenant, event.context.params!.id])
      if (!row) return new FastResponse('', { status: 404 })
      return new FastResponse(`{"data":${orderJson(row)}}`, { status: 200, headers })
    }
    const limit = Number(new URL(event.req.url).searchParams.get('limit') ?? 20)
    const rows = await query<OrderRow>('SELECT * FROM orders WHERE tenant_id = $1 ORDER BY id DESC LIMIT $2', [tenant, limit + 1])
    return new FastResponse(_pageJson(rows, limit), { status: 200, headers })
  }
  return what === 'one' ? new H3().get(path, answer) : new H3().get('/v1/orders', answer)
}

/** Rows read with `limit + 1` → the page's JSON: `limit` records, whether there are more, the cursor after the last. */
function _pageJson(rows: OrderRow[], limit: number): string {
  const more = rows.length > limit
  const page = rows.slice(0, limit)
  const cursor = more ? JSON.stringify(encodeCursor(page[page.length - 1]!.id)) : 'null'
  return `{"data":[${page.map(orderJson).join(',')}],"has_more":${more},"next_cursor":${cursor}}`
}

/** A POST's answer without what differs from one order to the next. */
function _volatileOut(text: string): string {
  const { data } = JSON.parse(text) as { data: Record<string, unknown> }
  for (const field of ['id', 'orderNumber', 'createdAt', 'updatedAt']) delete data[field]
  return JSON.stringify(data)
}

main().catch((err: unknown) => {
  process.stderr.write(`bench layers failed: ${String((err as Error)?.stack ?? err)}\n`)
  process.exit(1)
})
