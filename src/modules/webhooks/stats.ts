import * as v from 'valibot'
import type { TenantContext } from '../../context.ts'
import { BadInputError } from '../../lib/errors.ts'
import { timestampQuery } from '../fields.ts'
import * as out from '../view-fields.ts'
import { paced } from '../../lib/paced.ts'
import * as repo from './repo.ts'
import { statsPlan } from './stats-plan.ts'

export const STATS_BUCKETS = ['hour', 'day'] as const
/** At most this many buckets in one answer. */
export const MAX_STATS_BUCKETS = 1000

export const StatsQuery = {
  since: v.optional(timestampQuery('Start (inclusive, ISO 8601 or a date); default 24 h before `until`', '2027-06-01T00:00:00Z')),
  until: v.optional(timestampQuery('End (exclusive, ISO 8601 or a date); default now', '2027-06-02T00:00:00Z')),
  bucket: v.optional(v.pipe(v.picklist(STATS_BUCKETS, 'must be hour or day'), v.description('`hour` (default) or `day`, in UTC'))),
  webhook_id: v.optional(v.pipe(v.string(), v.regex(/^wh_[0-9a-f-]{36}$/, 'must be a webhook id (wh_…)'), v.description('Only this subscription\'s attempts'))),
}

export const StatsRowView = v.pipe(
  v.strictObject({
    start: v.pipe(out.Timestamp, v.description('Start of the bucket (UTC)')),
    attempts: out.Int(0),
    succeeded: v.pipe(out.Int(0), v.description('Attempts answered with a 2xx')),
    failed: v.pipe(out.Int(0), v.description('Every other attempt: another status, a timeout, a refused connection')),
    p50_ms: v.pipe(v.nullable(out.Int(0)), v.description('Median attempt duration; `null` for an empty bucket')),
    p95_ms: v.pipe(v.nullable(out.Int(0)), v.description('95th percentile of attempt duration; `null` for an empty bucket')),
  }),
  v.title('WebhookStatsBucket'),
)

export type StatsRow = v.InferOutput<typeof StatsRowView>

const _MS = { hour: 3_600_000, day: 86_400_000 } as const
/** ISO timestamps cut to the bucket: `2026-11-24T12` (hour) or `2026-11-24` (day). */
const _PREFIX = { hour: 13, day: 10 } as const

/**
 * Attempts of the tenant per bucket, counted by when they were made, empty buckets included.
 * Percentiles are exact: the attempts of a bucket are read as (duration, count) pairs, summed per
 * hour ahead of time (attempt_stats), so a range costs its hours' distinct durations, not its
 * attempts; only the edge hours it cuts read attempts, at most half an hour's at each edge (stats-plan.ts).
 */
export async function webhookStats(
  ctx: TenantContext, q: { since?: string; until?: string; bucket?: (typeof STATS_BUCKETS)[number]; webhook_id?: string },
): Promise<StatsRow[]> {
  const bucket = q.bucket ?? 'hour'
  const until = q.until ?? ctx.clock.now().toISOString()
  const since = q.since ?? new Date(Date.parse(until) - 86_400_000).toISOString()
  const first = Math.floor(Date.parse(since) / _MS[bucket]) * _MS[bucket]
  const count = Math.ceil((Date.parse(until) - first) / _MS[bucket])
  if (!(Date.parse(until) > Date.parse(since))) throw new BadInputError('`until` must be after `since`', [{ path: 'until', message: 'must be after since' }])
  if (count > MAX_STATS_BUCKETS) {
    throw new BadInputError(`At most ${MAX_STATS_BUCKETS} buckets; this range has ${count} ${bucket}s`, [{ path: 'since', message: `range too long for ${bucket} buckets` }])
  }
  const plan = statsPlan(since, until, ctx.clock.now())
  // Attempts made before this are all recorded: their delivery's deadline and a minute ago (repo.ts attemptHistogram()).
  const settled = new Date(ctx.clock.now().getTime() - ctx.config.deliveryTimeoutMs - 60_000).toISOString()
  const sums = new BucketSums()
  await repo.attemptHistogram(ctx.db, ctx.tenantId, { plan, prefix: _PREFIX[bucket], webhookId: q.webhook_id, settled }, sums)
  await sums.complete()
  return Array.from({ length: count }, (_, i) => {
    const start = new Date(first + i * _MS[bucket]).toISOString()
    return { start, ...sums.rows.get(start.slice(0, _PREFIX[bucket])) ?? _EMPTY }
  })
}

type Counts = Omit<StatsRow, 'start'>
const _EMPTY: Counts = { attempts: 0, succeeded: 0, failed: 0, p50_ms: null, p95_ms: null }

/**
 * The rows read for a stats answer, summed per bucket: each duration's count and the 2xx count.
 * A bucket's row is worked out once it is complete and its sums let go, so what is kept is the
 * buckets still being read, not the range's (bucket, duration) pairs: a thousand days of a busy
 * tenant are millions of those, and summing and sorting them in one turn held every other request
 * for 300 ms. Both steps are paced (lib/paced.ts).
 */
class BucketSums implements repo.HistogramSink {
  readonly rows = new Map<string, Counts>()
  #open = new Map<string, { ok: number; n: Map<number, number> }>()

  add(rows: repo.HistogramRow[], sign: 1 | -1): Promise<void> {
    return paced(rows, (r) => {
      let b = this.#open.get(r.b)
      if (!b) this.#open.set(r.b, (b = { ok: 0, n: new Map() }))
      const d = Number(r.d)
      b.n.set(d, (b.n.get(d) ?? 0) + sign * Number(r.n))
      b.ok += sign * Number(r.ok)
    }, { step: 64 })
  }

  /** Works out the buckets before `bucket`, or every bucket (one may hold a duration for every ms of the delivery timeout: the clock is read after each). */
  complete(bucket?: string): Promise<void> {
    const done = [...this.#open.keys()].filter((b) => bucket === undefined || b < bucket)
    return paced(done, (b) => {
      const sums = this.#open.get(b)!
      this.#open.delete(b)
      this.rows.set(b, _counts(sums.n, sums.ok))
    })
  }
}

/** Nearest-rank percentiles over (duration → count); a duration whose count summed to 0 counts for nothing. */
function _counts(n: Map<number, number>, succeeded: number): Counts {
  const durations = Float64Array.from(n.keys()).sort()
  let attempts = 0
  for (const c of n.values()) attempts += c
  if (attempts === 0) return _EMPTY
  const at = (share: number) => {
    const rank = Math.max(1, Math.ceil(share * attempts))
    let seen = 0
    for (const d of durations) if ((seen += n.get(d)!) >= rank) return d
    return durations[durations.length - 1]!
  }
  return { attempts, succeeded, failed: attempts - succeeded, p50_ms: at(0.5), p95_ms: at(0.95) }
}
