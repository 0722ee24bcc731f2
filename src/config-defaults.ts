import type { Config } from './config.ts'

// The defaults alone, without the validation that needs valibot: `--help` shows them and loads
// nothing else (test/cli/startup.test.ts).

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
