import type { LogLevel } from './lib/logger.ts'

// The configuration's shape and defaults alone, without the validation that needs valibot:
// `--help` shows them and loads nothing else (test/cli/startup.test.ts).

/** Resolved configuration of a process. Flags win over environment, which wins over these defaults. */
export interface Config {
  db: string
  host: string
  port: number
  allowPrivateTargets: boolean
  retryBaseMs: number
  deliveryTimeoutMs: number
  rateLimit: number
  logLevel: LogLevel
  /** Subscriptions per tenant (not deleted), CONTRACT §9. */
  maxWebhooks: number
  /** A subscription failing this long is disabled (CONTRACT §11); 0 = never. */
  disableAfterMs: number
  /** Finished deliveries and their events are deleted this long after (CONTRACT §11); 0 = kept. */
  retentionMs: number
  /** GET /metrics in the Prometheus text format (CONTRACT §13). */
  metrics: boolean
  /** PEM files (paths): serve HTTPS instead of HTTP (CONTRACT §13). */
  tlsCert: string | null
  tlsKey: string | null
  /** The administration dashboard at /dashboard and its sessions (CONTRACT §14). */
  dashboard: boolean
  /** Open connections at most (CONTRACT §16); null: derived from the open-file limit when serve starts (http/connections.ts). */
  maxConnections: number | null
  /** The address clients reach serve at (behind a proxy): dashboard links use it instead of the request's Host. */
  publicUrl: string | null
}

export const DEFAULT_CONFIG: Config = {
  db: './travelops.db',
  host: '127.0.0.1',
  port: 3000,
  allowPrivateTargets: false,
  retryBaseMs: 60_000,
  deliveryTimeoutMs: 30_000,
  rateLimit: 1000,
  logLevel: 'info',
  maxWebhooks: 50,
  disableAfterMs: 5 * 86_400_000,
  retentionMs: 30 * 86_400_000,
  metrics: false,
  tlsCert: null,
  tlsKey: null,
  dashboard: true,
  maxConnections: null,
  publicUrl: null,
}
