import type { Engine } from './engine/port.ts'
import type { Db } from './db/connect.ts'
import type { Clock } from './lib/clock.ts'
import type { Config } from './config.ts'
import type { Logger } from './lib/logger.ts'
import type { ResolveAll } from './delivery/guard-connect.ts'
import type { Metrics } from './http/metrics.ts'
import type { Job, Lease } from './delivery/port.ts'

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

/** Deliveries a commit has just queued: one per subscription listed (a subscription may be listed more than once). */
export interface FreshWork {
  tenantId: string
  webhookIds: readonly string[]
  /** Those deliveries, when they were written under the worker's lease: its jobs, ready to send. */
  jobs?: readonly Job[]
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
