import { toNodeHandler } from 'h3/node'
import { createApp } from './app.ts'
import { applyServeV8Flags } from './node-flags.ts'
import { listenStrict, type Listening } from './http/listen.ts'
import { defaultMaxConnections } from './http/connections.ts'
import { createMetrics } from './http/metrics.ts'
import type { Config } from './config.ts'
import type { AppDeps } from './context.ts'
import type { RouteDef } from './http/define-route.ts'
import { openForServe } from './engine/open.ts'
import { pruneIdempotencyKeys } from './http/idempotency.ts'
import { pruneSignIns } from './modules/dashboard/index.ts'
import type { ResolveAll } from './delivery/guard-connect.ts'
import { createSender } from './delivery/send.ts'
import { DEFAULT_SLOTS, startWorker } from './delivery/worker.ts'
import { startPruner } from './engine/retention.ts'
import { randomUUID } from 'node:crypto'
import { systemClock, type Clock } from './lib/clock.ts'
import { createLogger, type Logger } from './lib/logger.ts'
import { existingStreams } from './events/streams.ts'
import { VERSION } from './version.ts'

export interface RunningServer {
  url: string
  /** Node's HTTP(S) server under it, with the connection bounds applied (connections.ts). */
  http: Listening['server']
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
 * `travelops serve`: migrations, the delivery worker, then the HTTP(S) API, listening through
 * listhen with §2's port rules kept (listen.ts).
 */
export async function startServer(config: Config, opts: StartOptions = {}): Promise<RunningServer> {
  const logger = opts.logger ?? createLogger(config.logLevel)
  const clock = opts.clock ?? systemClock
  const serveId = `srv_${randomUUID()}`
  const { opened, unlock } = await openForServe(config.db, serveId, clock.now())
  const { engine } = opened
  // The engine's work beside serve (SQLite's WAL checkpoints), and the room bulk deletes wait for.
  const background = engine.startBackground(logger)
  const store = engine.deliveryStore({ disableAfterMs: config.disableAfterMs })
  const userAgent = `travelops/${VERSION}`
  const metrics = config.metrics ? await createMetrics(engine, clock) : undefined
  const worker = startWorker({
    observe: metrics ? (outcome, seconds) => metrics.attempt(outcome, seconds) : undefined,
    store, clock, logger, userAgent,
    // As many connections per subscription as it may ever have attempts in flight: none queue in undici.
    sender: createSender({ timeoutMs: config.deliveryTimeoutMs, allowPrivate: config.allowPrivateTargets, userAgent, resolve: opts.resolve, connectionsPerKey: DEFAULT_SLOTS.maxPerWebhook }),
    retryBaseMs: config.retryBaseMs,
    timeoutMs: config.deliveryTimeoutMs,
  })
  // Work committed here is this worker's; it tells the other processes only of what it cannot take.
  const notify: AppDeps['notify'] = (fresh) => worker.wake(fresh)
  const deps: AppDeps = { db: opened.db, engine, clock, config, logger, notify, lease: (tenantId) => worker.lease(tenantId), resolve: opts.resolve, metrics }
  const app = createApp(deps)
  const maxConnections = config.maxConnections ?? defaultMaxConnections()
  let listening: Listening
  try {
    listening = await listenStrict(toNodeHandler(app.h3), { host: config.host, port: config.port, tlsCert: config.tlsCert, tlsKey: config.tlsKey, maxConnections })
  } catch (err) {
    await worker.stop(0)
    await background.stop()
    unlock()
    await opened.close()
    throw err
  }
  const { server, url } = listening
  applyServeV8Flags()
  logger.info('travelops started', { version: VERSION, engine: engine.name, db: engine.shown, url, maxConnections })
  // `dashboard link` names this address (CONTRACT §16); serve runs on without it.
  // Behind a proxy (--public-url) the address browsers reach is the public one.
  const forgetUrl = await engine.recordServeUrl(serveId, config.publicUrl ?? url, clock.now())
    .catch((err: unknown) => { logger.warn('could not record the listening address', { error: String(err) }); return async () => {} })

  const pruner = startPruner({ engine, retentionMs: config.retentionMs, clock, logger, room: background.room })
  // Hourly housekeeping; stop() ends it between two statements and waits for it.
  let endHousekeeping = () => {}
  const housekeepingEnds = new Promise<void>((resolve) => (endHousekeeping = resolve))
  let housekeeping: Promise<unknown> = Promise.resolve()
  const prune = setInterval(() => {
    housekeeping = Promise.all([
      pruneIdempotencyKeys(deps, { room: background.room, stopping: housekeepingEnds })
        .catch((err: unknown) => logger.warn('idempotency prune failed', { error: String(err) })),
      pruneSignIns(deps.db, clock.now()).catch((err: unknown) => logger.warn('dashboard sign-in prune failed', { error: String(err) })),
      engine.pruneRateWindows(clock.now().getTime())
        .catch((err: unknown) => logger.warn('rate window prune failed', { error: String(err) })),
    ])
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
    endHousekeeping()
    // Event streams never end by themselves: they end first, cleanly, so the server can close.
    await existingStreams(engine)?.close()
    const wait = Math.max(0, graceMs - 2_000)
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    server.closeIdleConnections()
    const timer = setTimeout(() => server.closeAllConnections(), wait)
    await Promise.all([closed, worker.stop(wait), pruner.stop(), housekeeping])
    clearTimeout(timer)
    await app.close()
    await forgetUrl().catch((err: unknown) => logger.warn('could not remove the listening address', { error: String(err) }))
    await background.stop()
    unlock()
    await opened.close()
  })())

  return { url, http: server, deps, routes: app.routes, stop }
}
