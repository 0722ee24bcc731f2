import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler } from 'h3/node'
import { createApp } from './app.ts'
import type { Config } from './config.ts'
import type { AppDeps } from './context.ts'
import type { RouteDef } from './http/define-route.ts'
import { openDb } from './db/connect.ts'
import { pruneIdempotencyKeys } from './http/idempotency.ts'
import type { ResolveAll } from './delivery/guard-connect.ts'
import { createSender } from './delivery/send.ts'
import { startWorker } from './delivery/worker.ts'
import { sqliteDeliveryStore } from './db/delivery-store.ts'
import { startPruner } from './db/retention.ts'
import { migrate } from './db/migrate.ts'
import { acquireServeLock, assertNoOtherServe } from './db/process-lock.ts'
import { randomUUID } from 'node:crypto'
import { systemClock, type Clock } from './lib/clock.ts'
import { createLogger, type Logger } from './lib/logger.ts'
import { VERSION } from './version.ts'

export interface RunningServer {
  url: string
  deps: AppDeps
  routes: readonly RouteDef[]
  /** Stops accepting, lets in-flight requests and deliveries finish (at most `graceMs`), closes the database. */
  stop(graceMs?: number): Promise<void>
}

export interface StartOptions {
  clock?: Clock
  logger?: Logger
  /** Host name resolution for webhook targets; tests pass one that never leaves the machine. */
  resolve?: ResolveAll
}

/**
 * `travelops serve`: migrations, the delivery worker, then the HTTP API. (h3's node adapter on node:http rather
 * than listhen: listhen turns port 0 into 3000 and silently moves to another port when the
 * asked one is busy, which an operator must be told instead.)
 */
export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const logger = opts.logger ?? createLogger(config.logLevel)
  const clock = opts.clock ?? systemClock
  const opened = openDb(config.db, { migrate: false })
  let unlock = () => {}
  try {
    assertNoOtherServe(opened.sqlite, config.db) // before migrating: a refused start writes nothing
    migrate(opened.sqlite)
    unlock = acquireServeLock(opened.sqlite, config.db, `srv_${randomUUID()}`, clock.now())
  } catch (err) {
    await opened.close()
    throw err
  }
  const userAgent = `travelops/${VERSION}`
  const worker = startWorker({
    store: sqliteDeliveryStore(opened.db, { disableAfterMs: config.disableAfterMs }), clock, logger, userAgent,
    sender: createSender({ timeoutMs: config.deliveryTimeoutMs, allowPrivate: config.allowPrivateTargets, userAgent, resolve: opts.resolve }),
    retryBaseMs: config.retryBaseMs,
    timeoutMs: config.deliveryTimeoutMs,
  })
  const deps: AppDeps = { db: opened.db, clock, config, logger, notify: () => worker.wake(), resolve: opts.resolve }
  const app = createApp(deps)
  const server = createServer({ keepAliveTimeout: 5_000 }, toNodeHandler(app.h3))
  try {
    await _listen(server, config.port, config.host)
  } catch (err) {
    await worker.stop(0)
    unlock()
    await opened.close()
    throw err
  }
  const { port } = server.address() as AddressInfo
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  const url = `http://${host}:${port}`

  const pruner = startPruner({ db: opened.db, retentionMs: config.retentionMs, clock, logger })
  const prune = setInterval(() => {
    pruneIdempotencyKeys(deps).catch((err: unknown) => logger.warn('idempotency prune failed', { error: String(err) }))
  }, 3_600_000)
  prune.unref()

  let stopping: Promise<void> | undefined
  /**
   * Within `graceMs` (CONTRACT §9: exit within 10 s whatever receivers do): requests and
   * attempts in flight get all but the last 2 s to finish; then connections are cut, attempts
   * still waiting for an answer are aborted and given back, answers received are recorded.
   */
  const stop = (graceMs = 10_000) => (stopping ??= (async () => {
    clearInterval(prune)
    const wait = Math.max(0, graceMs - 2_000)
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    server.closeIdleConnections()
    const timer = setTimeout(() => server.closeAllConnections(), wait)
    await Promise.all([closed, worker.stop(wait), pruner.stop()])
    clearTimeout(timer)
    unlock()
    await opened.close()
  })())

  return { url, deps, routes: app.routes, stop }
}

function _listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
}
