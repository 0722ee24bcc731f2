import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { CompiledQuery, createQueryId, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type UnknownRow } from 'kysely'
import { DEFAULT_CONFIG } from '../../src/config.ts'
import type { Db } from '../../src/db/connect.ts'
import { pruneStep } from '../../src/engine/retention.ts'
import type { Job, Outcome } from '../../src/delivery/port.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { attemptHistogram } from '../../src/modules/webhooks/repo.ts'
import { statsPlan } from '../../src/modules/webhooks/stats-plan.ts'
import { webhookStats, type StatsRow } from '../../src/modules/webhooks/stats.ts'
import { queryRows } from '../helpers/engine.ts'
import { claimedJobs, storeUnderTest } from '../helpers/store.ts'

// §11 statistics from attempt_stats (the attempts summed per hour, migrations/0013): recorded
// through the engine's real delivery store, pruned by real retention steps, the answers equal
// a plain computation over delivery_attempts, and the read costs hours, not attempts.

const H = 3_600_000
/** 21:00 UTC: five hours of attempts cross midnight (day buckets) and six hour edges. */
const BASE = Date.UTC(2026, 0, 1, 21)
const iso = (ms: number) => new Date(ms).toISOString()
const CODES = [200, 204, 299, 301, 404, 410, 500, null] as const

type Query = { since: string; until: string; bucket: 'hour' | 'day'; webhook_id?: string }
type Attempt = { tenant_id: string; webhook_id: string; at: string; duration_ms: number; response_code: number | null }

let env: Awaited<ReturnType<typeof storeUnderTest>>
let jobs: Job[] = []
before(async () => {
  env = await storeUnderTest()
  for (let i = 0; i < 3; i++) jobs.push(...await claimedJobs(env.opened, env.store, env, `owner-${i}`, 15))
})
after(async () => { await env.close() })

function outcome(job: Job, at: number, code: number | null, durationMs: number): Outcome {
  const ok = code !== null && code >= 200 && code <= 299
  return { job, at: iso(at), responseCode: code, durationMs, error: code === null ? 'connection refused' : null, responseBody: null, delivered: ok, nextRetryAt: null, retries: 0 }
}

function stats(q: Query, now: number, db: Db = env.opened.db): Promise<StatsRow[]> {
  const ctx = { db, engine: env.opened.engine, clock: { now: () => new Date(now) }, config: DEFAULT_CONFIG, logger: createLogger('silent'), notify: () => {}, tenantId: env.tenantId, keyId: env.keyId }
  return webhookStats(ctx, q)
}

async function attempts(): Promise<Attempt[]> {
  return queryRows<Attempt>(env.app.dbFile, `SELECT a.tenant_id, d.webhook_id, a.at, a.duration_ms, a.response_code
    FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id`)
}

/** What stats must answer, computed the plain way: every attempt of the range, sorted durations, nearest rank. */
function expected(all: Attempt[], q: Query): StatsRow[] {
  const ms = q.bucket === 'hour' ? H : 24 * H
  const first = Math.floor(Date.parse(q.since) / ms) * ms
  const count = Math.ceil((Date.parse(q.until) - first) / ms)
  const inRange = all.filter((a) => a.tenant_id === env.tenantId && a.at >= q.since && a.at < q.until && (!q.webhook_id || a.webhook_id === q.webhook_id))
  return Array.from({ length: count }, (_, i) => {
    const start = first + i * ms
    const mine = inRange.filter((a) => Date.parse(a.at) >= start && Date.parse(a.at) < start + ms)
    const d = mine.map((a) => a.duration_ms).sort((x, y) => x - y)
    const succeeded = mine.filter((a) => a.response_code !== null && a.response_code >= 200 && a.response_code <= 299).length
    const at = (share: number) => (d.length === 0 ? null : d[Math.max(1, Math.ceil(share * d.length)) - 1]!)
    return { start: iso(start), attempts: d.length, succeeded, failed: d.length - succeeded, p50_ms: at(0.5), p95_ms: at(0.95) }
  })
}

/** attempt_stats equals delivery_attempts summed per (tenant, hour, subscription, duration), with no empty row. */
async function assertSumsMatch(): Promise<void> {
  const sums = new Map<string, { n: number; ok: number }>()
  for (const a of await attempts()) {
    const key = [a.tenant_id, a.at.slice(0, 13), a.webhook_id, a.duration_ms].join(' ')
    const s = sums.get(key) ?? { n: 0, ok: 0 }
    s.n += 1
    s.ok += a.response_code !== null && a.response_code >= 200 && a.response_code <= 299 ? 1 : 0
    sums.set(key, s)
  }
  const rows = await queryRows<{ tenant_id: string; hour: string; webhook_id: string; duration_ms: number; n: number; ok: number }>(env.app.dbFile, 'SELECT * FROM attempt_stats')
  assert.deepEqual(new Map(rows.map((r) => [[r.tenant_id, r.hour, r.webhook_id, r.duration_ms].join(' '), { n: Number(r.n), ok: Number(r.ok) }])), sums)
}

const time = fc.oneof(fc.integer({ min: 0, max: 5 * H - 1 }), fc.integer({ min: 0, max: 5 }).map((h) => h * H))
const cycleArb = fc.array(fc.record({
  job: fc.nat(), at: time, code: fc.constantFrom(...CODES), duration: fc.oneof(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 30_000 })),
}), { minLength: 1, maxLength: 25 })
const edge = fc.oneof(fc.integer({ min: -H, max: 6 * H }), fc.integer({ min: -1, max: 6 }).map((h) => h * H))
const queryArb = fc.record({ a: edge, b: edge, now: fc.integer({ min: -H, max: 8 * H }), day: fc.boolean(), webhook: fc.integer({ min: -1, max: 3 }) })
  .filter((r) => r.a !== r.b)
  .map((r): { q: Query; now: number } => {
    const webhook_id = r.webhook < 0 ? undefined : r.webhook === 3 ? 'wh_00000000-0000-7000-8000-000000000000' : jobs[r.webhook * 15]!.webhook_id
    return { q: { since: iso(BASE + Math.min(r.a, r.b)), until: iso(BASE + Math.max(r.a, r.b)), bucket: r.day ? 'day' : 'hour', webhook_id }, now: BASE + r.now }
  })

async function record(cycle: { job: number; at: number; code: number | null; duration: number }[]): Promise<void> {
  await env.store.cycle(cycle.map((c) => outcome(jobs[c.job % jobs.length]!, BASE + c.at, c.code, c.duration)))
}

describe('webhook stats from attempt_stats', { concurrency: false }, () => {
  test('the stats read costs the hours of the range, not its attempts: whole hours read no attempt, cut ones only their edges', async () => {
    // 180 attempts in hours 0–3 (45 each), through the store's recording path.
    for (let h = 0; h < 4; h++) {
      await env.store.cycle(jobs.map((j, i) => outcome(j, BASE + h * H + i * 60_000, i % 7 === 0 ? 500 : 200, 10 + (i % 5))))
    }
    const all = await attempts()
    assert.equal(all.length, 180)
    const whole: Query = { since: iso(BASE), until: iso(BASE + 4 * H), bucket: 'hour' }
    const cut: Query = { since: iso(BASE + 50 * 60_000), until: iso(BASE + 3 * H + 10 * 60_000), bucket: 'hour' }
    const later = BASE + 10 * H
    for (const [q, edges] of [[whole, 0], [cut, 10 + 10]] as const) {
      const read = await attemptRowsRead(q, later)
      assert.deepEqual(read.answer, expected(all, q))
      if (read.rows !== undefined) assert.ok(read.rows <= edges, `${read.rows} attempt rows read for ${JSON.stringify(q)}; the edges hold ${edges}`)
      // What is long settled is read in windows, a statement each: the hours' sums in windows of whole
      // hours (1, 2, 1 for four hours), each edge in windows of time (ten of 1, 2, 4… s cover ten minutes).
      assert.ok(read.statements >= (edges === 0 ? 3 : 2 + 2 * 5), `${read.statements} statements`)
      if (edges === 0) assert.deepEqual(read.attemptScans, [], 'no access to delivery_attempts at all')
      // From the index alone: an attempt's row holds its answer's body (up to 4 KB), and reading
      // those rows made an edge of 67,000 attempts with 1 KB bodies take 0.6 s on SQLite (25 ms from the index).
      else assert.ok(read.attemptScans.length > 0 && read.attemptScans.every((s) => /COVERING INDEX|Index Only Scan/.test(s)), `from the index on (tenant_id, at, duration_ms, response_code) alone: ${read.attemptScans.join('; ')}`)
    }
  })

  test('random attempts, cycles and ranges: the answers are those of a plain computation over delivery_attempts', async () => {
    await fc.assert(fc.asyncProperty(fc.array(cycleArb, { minLength: 1, maxLength: 3 }), fc.array(queryArb, { minLength: 1, maxLength: 4 }), async (cycles, queries) => {
      for (const c of cycles) await record(c)
      const all = await attempts()
      for (const { q, now } of queries) assert.deepEqual(await stats(q, now), expected(all, q), JSON.stringify({ q, now: iso(now) }))
    }), { numRuns: 30 })
    await assertSumsMatch()
  })

  test('retention takes deleted attempts away from the sums (rows counting none deleted); an outcome whose delivery is gone adds nothing', async () => {
    for (let i = 0; i < 10; i++) await record([{ job: i * 4, at: (i % 5) * H + 1, code: 200, duration: 7 }])
    const before = (await attempts()).length
    // Deliveries whose last attempt is before 02:30 go, with every attempt they had (some later than that).
    for (let r = await pruneStep(env.opened.engine, iso(BASE + 2.5 * H)); r.more; r = await pruneStep(env.opened.engine, iso(BASE + 2.5 * H), r.cursor));
    const all = await attempts()
    assert.ok(all.length < before && all.length > 0, `${before} → ${all.length} attempts`)
    await assertSumsMatch()
    await record(jobs.map((_, i) => ({ job: i, at: 4 * H + i, code: 200, duration: 3 })))
    await assertSumsMatch()
    await fc.assert(fc.asyncProperty(queryArb, async ({ q, now }) => {
      assert.deepEqual(await stats(q, now), expected(await attempts(), q))
    }), { numRuns: 40 })
  })

  test('a long range is summed bucket by bucket: each bucket is let go as the windows pass it, never before its last row is read', async () => {
    // Attempts on every day of a week from BASE (21:00), through the store's recording path.
    for (let d = 0; d < 7; d++) await record(Array.from({ length: 12 }, (_, i) => ({ job: i * 3, at: d * 24 * H + i * 97 * 60_000, code: i % 4 ? 200 : 500, duration: d * 10 + i })))
    const now = BASE + 10 * 24 * H
    const settled = iso(now - DEFAULT_CONFIG.deliveryTimeoutMs - 60_000)
    // Both edges cut an hour, so edge attempts are read (added or taken away) beside the hours' sums.
    for (const q of [
      { since: iso(BASE - 20 * 60_000), until: iso(BASE + 7 * 24 * H - 25 * 60_000), bucket: 'day' },
      { since: iso(BASE + 50 * 60_000), until: iso(BASE + 7 * 24 * H + 35 * 60_000), bucket: 'hour' },
    ] satisfies Query[]) {
      const prefix = q.bucket === 'day' ? 10 : 13
      const calls: ({ rows: string[] } | { complete: string })[] = []
      await attemptHistogram(env.opened.db, env.tenantId, { plan: statsPlan(q.since, q.until, new Date(now)), prefix, settled }, {
        add: async (rows) => { calls.push({ rows: rows.map((r) => r.b) }) },
        complete: async (bucket) => { calls.push({ complete: bucket }) },
      })
      const buckets = new Set(calls.flatMap((c) => ('rows' in c ? c.rows : [])))
      assert.ok(buckets.size >= 7, `${buckets.size} buckets with attempts`)
      const completed: string[] = []
      let open = new Set<string>()
      let mostOpen = 0
      for (const c of calls) {
        if ('complete' in c) {
          assert.ok(completed.every((b) => b <= c.complete), `completions in order: ${[...completed, c.complete].join(', ')}`)
          completed.push(c.complete)
          open = new Set([...open].filter((b) => b >= c.complete))
        } else {
          const late = c.rows.filter((b) => completed.some((done) => b < done))
          assert.deepEqual(late, [], `rows of buckets already complete (${completed.at(-1)})`)
          for (const b of c.rows) open.add(b)
          mostOpen = Math.max(mostOpen, open.size)
        }
      }
      assert.ok(completed.length >= 3 && mostOpen < buckets.size, `${completed.length} completions; at most ${mostOpen} of ${buckets.size} buckets open at once`)
      assert.deepEqual(await stats(q, now), expected(await attempts(), q), JSON.stringify(q))
    }
  })
})

/**
 * The stats statement run again under EXPLAIN: PostgreSQL's EXPLAIN ANALYZE counts the
 * delivery_attempts rows it read; SQLite's query plan says how it reaches them (no counts).
 */
async function attemptRowsRead(q: Query, now: number): Promise<{ answer: StatsRow[]; statements: number; rows?: number; attemptScans: string[] }> {
  const seen: RootOperationNode[] = []
  const answer = await stats(q, now, env.opened.db.withPlugin(new _Recorder(seen)))
  let rows = 0
  const attemptScans: string[] = []
  for (const node of seen) {
    const compiled = env.opened.db.getExecutor().compileQuery(node, createQueryId())
    if (env.opened.engine.name === 'postgres') {
      // An index-only scan needs the table's pages marked all-visible, as autovacuum leaves a table
      // that is written to; and a table this small is read whole unless told otherwise.
      await env.opened.db.executeQuery(CompiledQuery.raw('VACUUM delivery_attempts'))
      const plan = await env.opened.db.transaction().execute(async (tx) => {
        await tx.executeQuery(CompiledQuery.raw('SET LOCAL enable_seqscan = off'))
        await tx.executeQuery(CompiledQuery.raw('SET LOCAL enable_bitmapscan = off'))
        return (await tx.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${compiled.sql}`, [...compiled.parameters]))).rows[0]!['QUERY PLAN']
      })
      const nodes: { 'Relation Name'?: string; 'Node Type': string; 'Index Name'?: string; 'Actual Rows': number; 'Actual Loops': number }[] = []
      const walk = (n: any) => { nodes.push(n); for (const c of n.Plans ?? []) walk(c) }
      walk((plan as any)[0].Plan)
      const scans = nodes.filter((n) => n['Relation Name'] === 'delivery_attempts')
      rows += scans.reduce((s, n) => s + n['Actual Rows'] * n['Actual Loops'], 0)
      attemptScans.push(...scans.map((n) => `${n['Node Type']} ${n['Index Name'] ?? ''}`))
    } else {
      const plan = (await env.opened.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${compiled.sql}`, [...compiled.parameters]))).rows
      attemptScans.push(...plan.map((p) => p.detail).filter((d) => / a( |$)|delivery_attempts/.test(d)))
    }
  }
  return { answer, statements: seen.length, rows: env.opened.engine.name === 'postgres' ? rows : undefined, attemptScans }
}

class _Recorder implements KyselyPlugin {
  private readonly seen: RootOperationNode[]

  constructor(seen: RootOperationNode[]) {
    this.seen = seen
  }
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.seen.push(args.node)
    return args.node
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result
  }
}
