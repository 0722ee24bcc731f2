import { Command, Option } from 'commander'
import { DEFAULT_CONFIG as D } from '../src/config-defaults.ts'
import { configFrom, dbOption } from './util.ts'

/** src/lib/logger.ts's LOG_LEVELS (not imported: `--help` loads no server code); a test keeps them equal. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent']

export function serveCommand(): Command {
  return new Command('serve')
    .description('run the /v1 HTTP API and the webhook delivery loop')
    .addOption(dbOption())
    .addOption(new Option('--host <host>', `listen address (default: ${D.host}; 0.0.0.0 for every interface)`).env('HOST'))
    .addOption(new Option('--port <port>', `listen port (default: ${D.port}; 0 = any free port, printed)`).env('PORT'))
    .addOption(new Option('--allow-private-targets', 'allow webhook URLs on loopback/private/link-local addresses (default: off; env value 1/true/yes/on)').env('TRAVELOPS_ALLOW_PRIVATE_TARGETS'))
    .addOption(new Option('--retry-base <ms>', `first webhook retry delay in ms, then ×10 each retry (default: ${D.retryBaseMs})`).env('TRAVELOPS_RETRY_BASE_MS'))
    .addOption(new Option('--delivery-timeout <ms>', `receiver deadline in ms (default: ${D.deliveryTimeoutMs})`).env('TRAVELOPS_DELIVERY_TIMEOUT_MS'))
    .addOption(new Option('--rate-limit <n>', `requests per hour for keys created without their own limit (default: ${D.rateLimit})`).env('TRAVELOPS_RATE_LIMIT'))
    .addOption(new Option('--max-webhooks <n>', `webhook subscriptions per tenant (default: ${D.maxWebhooks})`).env('TRAVELOPS_MAX_WEBHOOKS'))
    .addOption(new Option('--disable-after <duration>', `disable a webhook subscription whose every attempt failed this long, e.g. 5d, 12h, 30s; 0 = never (default: ${_days(D.disableAfterMs)})`).env('TRAVELOPS_DISABLE_AFTER'))
    .addOption(new Option('--retention <duration>', `delete finished deliveries and their events this long after, e.g. 30d, 12h; 0 = keep everything (default: ${_days(D.retentionMs)})`).env('TRAVELOPS_RETENTION'))
    .addOption(new Option('--metrics', 'serve GET /metrics in the Prometheus text format (default: off; env value 1/true/yes/on)').env('TRAVELOPS_METRICS'))
    .addOption(new Option('--no-dashboard', 'do not serve the administration dashboard at /dashboard (default: served; env value 0/false/no/off turns it off)').env('TRAVELOPS_DASHBOARD'))
    .addOption(new Option('--max-connections <n>', 'open connections at most; past it new ones are closed at once (default: the open-file limit less 1024 kept for the database and deliveries, at least half the limit)').env('TRAVELOPS_MAX_CONNECTIONS'))
    .addOption(new Option('--tls-cert <file>', 'PEM certificate (chain): serve HTTPS, with --tls-key (default: plain HTTP)').env('TRAVELOPS_TLS_CERT'))
    .addOption(new Option('--tls-key <file>', 'PEM private key of --tls-cert').env('TRAVELOPS_TLS_KEY'))
    .addOption(new Option('--public-url <url>', 'the address clients reach serve at, e.g. https://travelops.example.com behind a proxy: dashboard links use it (default: the request\'s Host)').env('TRAVELOPS_PUBLIC_URL'))
    .addOption(new Option('--log-level <level>', `log lines at this level and above (default: ${D.logLevel})`).choices(LOG_LEVELS).env('TRAVELOPS_LOG_LEVEL'))
    .addHelpText('after', [
      '',
      'Flags win over environment variables, which win over the defaults.',
      '',
      'Examples:',
      '  $ travelops serve --db /var/lib/travelops/travelops.db --host 0.0.0.0 --port 8080',
      '  $ TRAVELOPS_RETENTION=90d travelops serve --tls-cert cert.pem --tls-key key.pem --metrics',
    ].join('\n'))
    .action(async (opts, cmd: Command) => {
      // commander turns a boolean flag on whenever its env twin is set at all (=0 too): hand the
      // value itself to the config, which reads 1/true/yes/on as on and anything else as off.
      if (cmd.getOptionValueSource('allowPrivateTargets') === 'env') opts.allowPrivateTargets = process.env.TRAVELOPS_ALLOW_PRIVATE_TARGETS
      if (cmd.getOptionValueSource('metrics') === 'env') opts.metrics = process.env.TRAVELOPS_METRICS
      if (cmd.getOptionValueSource('dashboard') === 'env') opts.dashboard = process.env.TRAVELOPS_DASHBOARD
      const config = await configFrom(opts)
      const { startServer } = await import('../src/server.ts')
      const server = await startServer(config)
      const shutdown = (signal: string) => {
        server.deps.logger.info('shutting down', { signal })
        server.stop().then(() => process.exit(0), (err: unknown) => {
          process.stderr.write(`shutdown failed: ${String(err)}\n`)
          process.exit(1)
        })
      }
      process.once('SIGINT', () => shutdown('SIGINT'))
      process.once('SIGTERM', () => shutdown('SIGTERM'))
      // Only now: whoever reads this line may signal at once, and before a handler is installed
      // the kernel's default for SIGTERM would end the process on the spot.
      process.stdout.write(`travelops listening on ${server.url}\n`)
    })
}

const _days = (ms: number) => (ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : `${ms / 1000}s`)
