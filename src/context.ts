import type { Engine } from './engine/port.ts'
import type { Db } from './db/connect.ts'
import type { Clock } from './lib/clock.ts'
import type { Config } from './config.ts'
import type { Logger } from './lib/logger.ts'
import type { ResolveAll } from './delivery/guard-connect.ts'
import type { FreshWork } from './delivery/fresh-work.ts'
import type { Lease } from './delivery/port.ts'

export type { FreshWork }

/** What the process shares: database, clock, configuration, logger, the worker's doorbell. */
export interface AppDeps {
  db: Db
  /** The database's engine (engine/port.ts): transactions, the outbox, and everything else that differs between SQLite and PostgreSQL. `engine.db` is `db`. */
  engine: Engine
  clock: Clock
  config: Config
  logger: Logger
  /**
   * Called after a transaction that queued deliveries has committed; with the subscriptions
   * given one, when known (the worker claims those at once instead of reading the queue first).
   */
  notify: (fresh?: FreshWork) => void
  /**
   * The lease this process's delivery worker offers for the deliveries a transaction of the
   * tenant is about to write (null: none now — it is behind, stopping, or that tenant's
   * subscriptions are all busy); with one, they are written already leased to it and given to
   * it by notify() (`FreshWork.jobs`). Absent outside `serve`.
   */
  lease?: (tenantId: string) => Lease | null
  /** Host name resolution for webhook targets (default: the system resolver). */
  resolve?: ResolveAll
  /** With `--metrics`: counters and histograms (http/metrics.ts). */
  metrics?: Metrics
}

/** What a request's services get: the shared deps plus the caller's tenant and key. */
export interface TenantContext extends AppDeps {
  tenantId: string
  keyId: string
  /** The caller's scopes (a dashboard session holds `*`); absent outside a request. */
  scopes?: readonly string[]
  /** Set when the caller is a signed-in dashboard browser (CONTRACT §14). */
  session?: { role: 'operator' | 'tenant' }
  /**
   * The key whose bounds what the request mints stays within (CONTRACT §16): the calling key, or
   * the key whose link opened the dashboard session. Absent for the operator's sessions (the CLI's links).
   */
  bounds?: KeyBounds
}

/** What a key may hand on (CONTRACT §16): its scopes, its rate limit (null: the server's --rate-limit), its expiry. */
export interface KeyBounds {
  id: string
  scopeList: readonly string[]
  rate_limit: number | null
  expires_at: string | null
}

/** `--metrics` (CONTRACT §13): what the request log and the delivery worker report; http/metrics.ts createMetrics() builds it. */
export interface Metrics {
  /** One answered request; `route` is the matched pattern (`/v1/orders/:id`) or `unmatched`. */
  request(method: string, route: string, status: number, seconds: number): void
  /** One finished delivery attempt. */
  attempt(outcome: 'delivered' | 'failed', seconds: number): void
  /** The exposition text and its content type. */
  render(): Promise<{ body: string; contentType: string }>
}
