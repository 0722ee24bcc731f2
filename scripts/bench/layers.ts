// The benchmark's `layers` figures: GET /v1/orders/:id taken apart, one layer per process, each
// loaded as the bare route is, so a run says where a GET's CPU goes and not only how much it is.
// Every variant answers the same order (the body and headers the real route answers), logs at
// info to its stderr (a file, as serve's) and runs with serve's Node flags; no delivery worker.
//   same-response  a bare h3 route answering that body with those headers
//   middleware     travelops' app (request id, the guard, the route's parameter and query
//                  validation, the standard headers, the log line) on the real route's
//                  definition made public, its handler answering the order without the database
//   key-check      the same with the route's own scope: API-key authentication and the rate limit
//   full           the real app, database read included
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { H3 } from 'h3'
import { toNodeHandler } from 'h3/node'
import { FastResponse } from 'srvx'
import { createApp } from '../../src/app.ts'
import { DEFAULT_CONFIG } from '../../src/config.ts'
import type { AppDeps } from '../../src/context.ts'
import { openDb } from '../../src/db/connect.ts'
import type { RouteDef } from '../../src/http/define-route.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { applyServeV8Flags } from '../../src/node-flags.ts'
import { send } from './child.ts'

const LAYERS = ['same-response', 'middleware', 'key-check', 'full'] as const
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
  const h3 = layer === 'same-response' ? new H3().get(route.path, () => new FastResponse(body, { status: 200, headers }))
    : layer === 'middleware' ? createApp(deps, [{ ...answering, scope: 'public' }]).h3
      : layer === 'key-check' ? createApp(deps, [answering]).h3
        : real.h3
  const server = createServer({ keepAliveTimeout: 5_000 }, toNodeHandler(h3))
  server.listen(0, '127.0.0.1', () => {
    applyServeV8Flags() // as serve sets them once it listens
    send({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
  })
}

main().catch((err: unknown) => {
  process.stderr.write(`bench layers failed: ${String((err as Error)?.stack ?? err)}\n`)
  process.exit(1)
})
