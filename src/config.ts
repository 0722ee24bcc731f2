import * as v from 'valibot'
import { DISABLE_AFTER, durationError, parseDuration, RETENTION, type DurationRange } from './lib/duration.ts'
import { LOG_LEVELS } from './lib/logger.ts'
import { DEFAULT_CONFIG, type Config } from './config-defaults.ts'

export { DEFAULT_CONFIG, type Config }

const int = (min: number, max: number) =>
  v.pipe(
    v.union([v.number(), v.string()]),
    v.transform((x) => (typeof x === 'string' && /^\d+$/.test(x.trim()) ? Number(x.trim()) : x)),
    v.number('must be a whole number'),
    v.integer('must be a whole number'),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  )

const bool = v.pipe(
  v.union([v.boolean(), v.string()]),
  v.transform((x) => (typeof x === 'boolean' ? x : ['1', 'true', 'yes', 'on'].includes(x.toLowerCase()))),
)

/** `<integer><s|m|h|d>` in `range`, or `0` (never) → milliseconds (CONTRACT §16). */
const duration = (range: DurationRange) => v.pipe(
  v.string(),
  v.check((x) => parseDuration(x, range) !== null, (i) => durationError(String(i.input), range)!),
  v.transform((x) => parseDuration(x, range)!),
)

const ConfigSchema = v.object({
  db: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  host: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  port: v.optional(int(0, 65535)),
  allowPrivateTargets: v.optional(bool),
  retryBase: v.optional(int(1, 86_400_000)),
  deliveryTimeout: v.optional(int(1, 600_000)),
  rateLimit: v.optional(int(1, 1_000_000_000)),
  logLevel: v.optional(v.picklist(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`)),
  maxWebhooks: v.optional(int(1, 100_000)),
  disableAfter: v.optional(duration(DISABLE_AFTER)),
  retention: v.optional(duration(RETENTION)),
  metrics: v.optional(bool),
  dashboard: v.optional(bool),
  tlsCert: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  tlsKey: v.optional(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  maxConnections: v.optional(int(1, 1_000_000)),
  publicUrl: v.optional(v.pipe(
    v.string(),
    v.check(_httpUrl, 'must be an http(s) URL such as https://travelops.example.com'),
    v.transform((x) => x.replace(/\/+$/, '')),
  )),
})

function _httpUrl(x: string): boolean {
  try {
    const u = new URL(x)
    return (u.protocol === 'http:' || u.protocol === 'https:') && !u.search && !u.hash && !u.username && !u.password
  } catch {
    return false
  }
}

export class ConfigError extends Error {}

/** Builds a Config from commander's option values (which already merged the env twins). */
export function resolveConfig(options: Record<string, unknown>): Config {
  const r = v.safeParse(ConfigSchema, options)
  if (!r.success) {
    const issue = r.issues[0]
    const key = issue.path?.map((p) => String(p.key)).join('.') ?? 'option'
    throw new ConfigError(`invalid --${key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())}: ${issue.message}`)
  }
  const o = r.output
  if ((o.tlsCert === undefined) !== (o.tlsKey === undefined)) throw new ConfigError('--tls-cert and --tls-key go together: give both, or neither')
  return {
    db: o.db ?? DEFAULT_CONFIG.db,
    host: o.host ?? DEFAULT_CONFIG.host,
    port: o.port ?? DEFAULT_CONFIG.port,
    allowPrivateTargets: o.allowPrivateTargets ?? DEFAULT_CONFIG.allowPrivateTargets,
    retryBaseMs: o.retryBase ?? DEFAULT_CONFIG.retryBaseMs,
    deliveryTimeoutMs: o.deliveryTimeout ?? DEFAULT_CONFIG.deliveryTimeoutMs,
    rateLimit: o.rateLimit ?? DEFAULT_CONFIG.rateLimit,
    logLevel: o.logLevel ?? DEFAULT_CONFIG.logLevel,
    maxWebhooks: o.maxWebhooks ?? DEFAULT_CONFIG.maxWebhooks,
    disableAfterMs: o.disableAfter ?? DEFAULT_CONFIG.disableAfterMs,
    retentionMs: o.retention ?? DEFAULT_CONFIG.retentionMs,
    metrics: o.metrics ?? DEFAULT_CONFIG.metrics,
    tlsCert: o.tlsCert ?? null,
    tlsKey: o.tlsKey ?? null,
    dashboard: o.dashboard ?? DEFAULT_CONFIG.dashboard,
    maxConnections: o.maxConnections ?? DEFAULT_CONFIG.maxConnections,
    publicUrl: o.publicUrl ?? null,
  }
}
