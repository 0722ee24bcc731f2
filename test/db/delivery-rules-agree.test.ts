import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test, type TestContext } from 'node:test'
import fc from 'fast-check'
import { statsDeltas } from '../../src/engine/attempt-stats.ts'
import { openDatabase } from '../../src/engine/open.ts'
import type { OpenDb } from '../../src/engine/port.ts'
import { READY_CAP, type Claim, type DeliveryStore, type Disabled, type Job, type Outcome, type QueuedWebhook } from '../../src/delivery/port.ts'
import { attemptTrigger, isDelivered } from '../../src/delivery/rules/attempt.ts'
import { endpointHealth, type DisabledReason } from '../../src/delivery/rules/health.ts'
import { receives } from '../../src/delivery/rules/fan-out.ts'
import { WEBHOOK_DISABLED } from '../../src/delivery/webhook-disabled.ts'
import { afterAttempt, claimedBy, dropQueued, isClaimable, queuedSummary, type QueueState } from '../../src/delivery/rules/queue-state.ts'
import { DEFAULT_CONFIG } from '../../src/config.ts'
import { withTx } from '../../src/engine/tx.ts'
import { EVENT_NAMES } from '../../src/events/catalog.ts'
import { emit } from '../../src/events/emit.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { newPgDatabase, openWithStore } from '../helpers/engine.ts'
import { insertWebhook } from '../helpers/store.ts'

// The stores record a batch of outcomes in set-based SQL, one dialect each (SQLite's CASE in
// engine/sqlite/delivery-store.ts, PostgreSQL's in engine/postgres/delivery-store.ts), for speed. This file checks
// both against the pure rules of src/delivery/rules/: random deliveries and subscriptions written
// on a real database of each engine, random outcomes recorded through DeliveryStore.cycle() in
// random batches, then a claim of what is due, and every row compared with what afterAttempt(),
// dropQueued(), endpointHealth(), statsDeltas(), queuedSummary(), isClaimable() and claimedBy() say. Fan-out likewise: SQLite's path filters with
// receives() itself, PostgreSQL's matches in its one statement (jsonb `?`), and both are checked
// against receives() on random subscriptions. A disabling also writes `webhook.disabled` (CONTRACT
// §15) through the outbox writer: the model gives each of the scenario's other subscriptions that
// receives() it a fresh pending delivery, due at the disabling attempt's time, which the queue
// read and the claim then see like any other. Both engines in one file, the engine in each test's
// name; PostgreSQL is TRAVELOPS_TEST_PG_URL's server (npm test starts one).

const MIN = 60_000
const HOUR = 60 * MIN
const BASE = Date.parse('2026-06-01T10:00:00.000Z')
const time = (ms: number) => new Date(BASE + ms).toISOString()
const OWNER = 'wrk_rules'
const HEALTH = { disableAfterMs: HOUR }
const QUEUE_COLUMNS = ['status', 'attempts', 'retries', 'manual', 'next_retry_at', 'due_at', 'delivered_at', 'response_code', 'last_attempt_at', 'locked_by', 'locked_until'] as const

interface Engine { name: 'sqlite' | 'postgres'; open(): Promise<string | undefined> }

const ENGINES: Engine[] = [
  {
    name: 'sqlite',
    open: async () => join(mkdtempSync(join(tmpdir(), 'travelops-rules-')), 'rules.db'),
  },
  {
    name: 'postgres',
    open: async () => (process.env.TRAVELOPS_TEST_PG_URL || process.env.TRAVELOPS_REQUIRE_PG === '1' ? newPgDatabase() : undefined),
  },
]

const webhookArb = fc.record({
  active: fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constant(0) }),
  failingSince: fc.option(fc.integer({ min: -2 * HOUR, max: 0 }), { nil: null }),
})
const rowArb = fc.record({
  webhook: fc.nat(),
  status: fc.constantFrom('pending' as const, 'delivered' as const, 'failed' as const),
  attempts: fc.integer({ min: 0, max: 4 }),
  retries: fc.integer({ min: 0, max: 3 }),
  manual: fc.integer({ min: 0, max: 2 }),
  next: fc.option(fc.integer({ min: -HOUR, max: 3 * HOUR }), { nil: null }),
  due: fc.option(fc.integer({ min: -HOUR, max: 3 * HOUR }), { nil: null }),
  lease: fc.constantFrom('held', 'held', 'held', 'other', 'none'),
})
const outcomeArb = fc.record({
  code: fc.constantFrom(200, 204, 410, 429, 500, null),
  claimedManual: fc.integer({ min: 0, max: 2 }),
  next: fc.option(fc.integer({ min: 0, max: 24 * HOUR }), { nil: null }),
  retries: fc.integer({ min: 0, max: 4 }),
  durationMs: fc.constantFrom(5, 120, 3000),
  /** Time since the previous outcome. */
  step: fc.integer({ min: 0, max: 40 * MIN }),
  /** The cycle ends after this outcome. */
  cut: fc.boolean(),
})
const scenarioArb = fc.record({
  webhooks: fc.array(webhookArb, { minLength: 1, maxLength: 3 }),
  rows: fc.array(rowArb, { minLength: 1, maxLength: 8 }),
}).chain((s) => fc.record({
  webhooks: fc.constant(s.webhooks),
  rows: fc.constant(s.rows),
  /** Which deliveries get an outcome, in which order; one of them may stand for a delivery already gone. */
  order: fc.shuffledSubarray(s.rows.map((_, i) => i), { minLength: 1 }),
  outcomes: fc.array(outcomeArb, { minLength: s.rows.length + 1, maxLength: s.rows.length + 1 }),
  gone: fc.option(fc.nat(), { nil: null }),
  /** When the claim that follows the outcomes runs: before or after the leases written end (1 h). */
  claimAt: fc.integer({ min: 0, max: 4 * HOUR }),
}))
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never

const fanOutArb = fc.record({
  webhooks: fc.array(fc.record({
    // Stored as the API stores them (a JSON array of names), with `*`, and a name no event has.
    events: fc.subarray([...EVENT_NAMES, '*', 'order'], { minLength: 0, maxLength: 4 }),
    active: fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constant(0) }),
    deleted: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    skipped: fc.boolean(),
  }), { maxLength: 9 }),
  event: fc.constantFrom(...EVENT_NAMES),
  /** Emitted under the worker's lease (the fast path), which skips some subscriptions. */
  leased: fc.boolean(),
  /** Events emitted before, each matched and so setting how many delivery ids the next one sends along (PostgreSQL). */
  before: fc.integer({ min: 0, max: 2 }),
})
type FanOut = typeof fanOutArb extends fc.Arbitrary<infer T> ? T : never

interface WebhookModel { active: boolean; failingSince: string | null; disabledAt: string | null; disabledReason: DisabledReason | null }

for (const engine of ENGINES) {
  describe(`[${engine.name}] the stores' SQL and the delivery rules agree`, () => {
    let target: string | undefined
    let opened: OpenDb
    let store: DeliveryStore
    let tenantId: string
    let run = 0
    before(async () => {
      target = await engine.open()
      if (!target) return
      await (await openDatabase(target, { create: true, migrate: true })).close()
      ;({ opened, store } = await openWithStore(target, HEALTH))
      tenantId = (await createTenant(opened.db, 'Rules', new Date(BASE))).id
    })
    after(async () => {
      await opened?.close()
      if (engine.name === 'sqlite' && target) rmSync(join(target, '..'), { recursive: true, force: true })
    })

    const leftOut = (t: TestContext) => t.diagnostic('left out: no PostgreSQL server (TRAVELOPS_TEST_PG_URL unset; npm test starts one)')

    test(`[${engine.name}] recorded outcomes leave deliveries, subscriptions, attempts and stats as the rules say`, async (t) => {
      if (!target) return leftOut(t)
      await fc.assert(fc.asyncProperty(scenarioArb, (s) => _check(s, ++run)), { numRuns: engine.name === 'sqlite' ? 150 : 60 })
    })

    test(`[${engine.name}] an event gets one delivery for each subscription that receives() picks, leased as asked`, async (t) => {
      if (!target) return leftOut(t)
      await fc.assert(fc.asyncProperty(fanOutArb, (s) => _fanOut(s, ++run)), { numRuns: engine.name === 'sqlite' ? 100 : 50 })
    })

    /** One fan-out on a tenant of its own. */
    async function _fanOut(s: FanOut, n: number): Promise<void> {
      const tenant = (await createTenant(opened.db, `Fan-out ${n}`, new Date(BASE))).id
      const webhooks = []
      for (const h of s.webhooks) {
        const row = { events: JSON.stringify(h.events), active: h.active, deleted_at: h.deleted ? time(0) : null }
        webhooks.push({ ...row, id: await insertWebhook(opened.db, tenant, row), skipped: h.skipped })
      }
      const lease = { owner: OWNER, until: time(HOUR), skip: webhooks.filter((h) => h.skipped).map((h) => h.id) }
      const ctx = {
        db: opened.db, engine: opened.engine, clock: systemClock, config: DEFAULT_CONFIG, logger: createLogger('silent'), notify: () => {}, tenantId: tenant, keyId: 'key_rules',
        lease: s.leased ? () => lease : undefined,
      }
      let eventId = ''
      for (let i = 0; i <= s.before; i++) eventId = (await withTx(opened.engine, (scope) => emit(scope, ctx, s.event, { n: i }))).id
      const written = await opened.db.selectFrom('deliveries').select(['webhook_id', 'status', 'due_at', 'locked_by']).where('event_id', '=', eventId).execute()
      assert.deepEqual(_sort(written, (d) => d.webhook_id).map((d) => ({ ...d, due_at: d.due_at !== null })), _sort(webhooks.filter((h) => receives(h, s.event)).map((h) => ({
        webhook_id: h.id, status: 'pending', due_at: true, locked_by: s.leased && !h.skipped ? OWNER : null,
      })), (d) => d.webhook_id))
    }

    /** One scenario on fresh rows of the shared database: written, recorded, compared. */
    async function _check(s: Scenario, n: number): Promise<void> {
      const eventId = `evt_rules_${n}`
      await opened.db.insertInto('events').values({ id: eventId, tenant_id: tenantId, name: 'order.created', payload: '{}', created_at: time(-3 * HOUR) }).execute()
      const webhookIds: string[] = []
      const webhooks = new Map<string, WebhookModel>()
      for (const h of s.webhooks) {
        const id = await insertWebhook(opened.db, tenantId, { active: h.active, failing_since: h.failingSince === null ? null : time(h.failingSince) })
        webhookIds.push(id)
        webhooks.set(id, { active: h.active === 1, failingSince: h.failingSince === null ? null : time(h.failingSince), disabledAt: null, disabledReason: null })
      }
      const rows: Rows = new Map()
      for (const [i, r] of s.rows.entries()) {
        const row = {
          status: r.status, attempts: r.attempts, retries: r.retries, manual: r.manual,
          next_retry_at: r.next === null ? null : time(r.next), due_at: r.due === null ? null : time(r.due),
          delivered_at: r.status === 'delivered' ? time(-2 * HOUR) : null, response_code: null, last_attempt_at: null,
          locked_by: r.lease === 'held' ? OWNER : r.lease === 'other' ? 'wrk_other' : null, locked_until: r.lease === 'none' ? null : time(HOUR),
        }
        const id = `del_rules_${n}_${i}`
        const webhookId = webhookIds[r.webhook % webhookIds.length]!
        await opened.db.insertInto('deliveries').values({ id, tenant_id: tenantId, webhook_id: webhookId, event_id: eventId, event: 'order.created', created_at: time(-3 * HOUR), ...row }).execute()
        rows.set(id, { ...row, webhook_id: webhookId })
      }

      // The outcomes, cut into cycles.
      const cycles: Outcome[][] = [[]]
      let clock = 0
      const ids = s.order.map((i) => `del_rules_${n}_${i}`)
      if (s.gone !== null) ids.splice(s.gone % (ids.length + 1), 0, `del_rules_${n}_gone`)
      for (const [i, id] of ids.entries()) {
        const g = s.outcomes[i]!
        clock += g.step
        const row = rows.get(id)
        const webhookId = row?.webhook_id ?? webhookIds[0]!
        const job: Job = {
          id, tenant_id: tenantId, webhook_id: webhookId, event_id: eventId, event: 'order.created', attempts: row?.attempts ?? 0, retries: row?.retries ?? 0,
          manual: g.claimedManual, next_retry_at: row?.next_retry_at ?? null, status: row?.status ?? 'pending', owner: OWNER,
          url: 'http://127.0.0.1:9/', secret: 'store-test-secret', headers: {}, retryCount: 3, payload: '{}', eventAt: time(-3 * HOUR),
        }
        cycles.at(-1)!.push({
          job, at: time(clock), responseCode: g.code, durationMs: g.durationMs, error: g.code === null ? 'refused' : null, responseBody: null,
          delivered: isDelivered(g.code), nextRetryAt: g.next === null ? null : time(clock + g.next), retries: g.retries,
        })
        if (g.cut) cycles.push([])
      }

      // Then a claim of everything due of this scenario's subscriptions, in a cycle of its own.
      let read: QueuedWebhook[] = []
      const claim: Claim = {
        now: time(s.claimAt), leaseUntil: time(s.claimAt + HOUR), owner: OWNER,
        plan: (queued) => {
          read = queued.filter((q) => webhooks.has(q.webhook_id))
          return read.map((q) => ({ webhook_id: q.webhook_id, limit: 100 }))
        },
      }
      const rules = _byTheRules(rows, webhooks, cycles, claim, () => tenantId)

      // What the store did.
      const disabledByStore: Disabled[][] = []
      for (const cycle of cycles) disabledByStore.push((await store.cycle(cycle)).disabled)
      const claimedByStore = (await store.cycle([], claim)).jobs.map((j) => j.id)

      // The model names a webhook.disabled delivery `wd:<disabled>:<receiver>`; the store's are found by their event.
      const disabledBy = new Map(disabledByStore.flat().map((d) => [d.event_id, d.webhook_id]))
      const announced = disabledBy.size === 0 ? [] : await opened.db.selectFrom('deliveries').select(['id', 'event_id', 'webhook_id', ...QUEUE_COLUMNS])
        .where('event_id', 'in', [...disabledBy.keys()]).where('webhook_id', 'in', webhookIds).execute()
      const stored = new Map(announced.map(({ event_id, ...r }) => [`wd:${disabledBy.get(event_id)}:${r.webhook_id}`, r.id]))
      const named = (id: string) => stored.get(id) ?? id

      assert.deepEqual(_sort(read.map((q) => ({ ...q, ready: Number(q.ready) })), (q) => q.webhook_id), _sort(rules.queued, (q) => q.webhook_id), 'the queue read')
      assert.deepEqual(_sort(claimedByStore, (id) => id), _sort(rules.claimed.map(named), (id) => id), 'deliveries claimed')
      assert.deepEqual(disabledByStore.map((d) => _sort(d.map(({ event_id, ...x }) => x), (x) => x.webhook_id)), rules.disabled.map((d) => _sort(d, (x) => x.webhook_id)), 'subscriptions disabled, cycle by cycle')
      const modelRows = (webhookDisabled: boolean) => _sort([...rows].filter(([id]) => id.startsWith('wd:') === webhookDisabled).map(([id, r]) => _pick({ id: named(id), ...r })), (r) => r.id as string)
      const numbers = <R extends { attempts: number; retries: number; manual: number; response_code: number | null }>(r: R) =>
        ({ ...r, attempts: Number(r.attempts), retries: Number(r.retries), manual: Number(r.manual), response_code: r.response_code === null ? null : Number(r.response_code) })
      const recordedRows = await opened.db.selectFrom('deliveries').select(['id', 'webhook_id', ...QUEUE_COLUMNS]).where('event_id', '=', eventId).execute()
      assert.deepEqual(_sort(recordedRows, (r) => r.id).map(numbers), modelRows(false), 'deliveries')
      assert.deepEqual(_sort(announced.map(({ event_id, ...r }) => r), (r) => r.id).map(numbers), modelRows(true), 'webhook.disabled deliveries')
      const storedWebhooks = await opened.db.selectFrom('webhooks').select(['id', 'active', 'failing_since', 'disabled_at', 'disabled_reason']).where('id', 'in', webhookIds).execute()
      assert.deepEqual(_sort(storedWebhooks, (w) => w.id).map((w) => ({ ...w, active: Number(w.active) })),
        _sort([...webhooks], ([id]) => id).map(([id, h]) => ({ id, active: h.active ? 1 : 0, failing_since: h.failingSince, disabled_at: h.disabledAt, disabled_reason: h.disabledReason })), 'subscriptions')
      const storedAttempts = await opened.db.selectFrom('delivery_attempts').select(['delivery_id', 'attempt', 'trigger', 'at', 'response_code', 'duration_ms'])
        .where('delivery_id', 'in', [...rows.keys()]).execute()
      assert.deepEqual(_sort(storedAttempts, (a) => a.delivery_id).map((a) => ({ ...a, attempt: Number(a.attempt), response_code: a.response_code === null ? null : Number(a.response_code), duration_ms: Number(a.duration_ms) })),
        _sort(rules.attempts, (a) => a.delivery_id), 'attempt rows')
      const stats = await opened.db.selectFrom('attempt_stats').select(['tenant_id', 'hour', 'webhook_id', 'duration_ms', 'n', 'ok']).where('webhook_id', 'in', webhookIds).execute()
      const statKey = (r: readonly unknown[]) => JSON.stringify(r.slice(0, 4))
      assert.deepEqual(_sort(stats.map((r) => [r.tenant_id, r.hour, r.webhook_id, Number(r.duration_ms), Number(r.n), Number(r.ok)]), statKey),
        _sort(statsDeltas(rules.recorded), statKey), 'attempt_stats')
      // Out of the later scenarios' fan-outs (same tenant): their disablings write to active subscriptions only.
      await opened.db.updateTable('webhooks').set({ active: 0 }).where('id', 'in', webhookIds).execute()
    }
  })
}

type Rows = Map<string, QueueState & { webhook_id: string }>

/**
 * What the rules say the cycles and the claim do, applied to the model in order (`rows` and
 * `webhooks` end as the rules leave them): outcome by outcome, the attempt and the delivery's state,
 * then the subscription's health, a disabling dropping its queue; then what the claim's read of
 * the queue finds and what the claim takes.
 */
function _byTheRules(rows: Rows, webhooks: Map<string, WebhookModel>, cycles: Outcome[][], claim: Claim, tenantOf: (webhookId: string) => string) {
  const attempts: { delivery_id: string; [column: string]: unknown }[] = []
  const recorded: Outcome[] = []
  const disabled: Omit<Disabled, 'event_id'>[][] = []
  for (const cycle of cycles) {
    const now: Omit<Disabled, 'event_id'>[] = []
    for (const o of cycle) {
      const row = rows.get(o.job.id)
      if (!row) continue
      const webhook = webhooks.get(row.webhook_id)!
      recorded.push(o)
      attempts.push({ delivery_id: o.job.id, attempt: row.attempts + 1, trigger: attemptTrigger(o.job), at: o.at, response_code: o.responseCode, duration_ms: o.durationMs })
      rows.set(o.job.id, { ...afterAttempt(row, o, webhook.active), webhook_id: row.webhook_id })
      const v = endpointHealth(webhook, o, HEALTH.disableAfterMs)
      webhook.failingSince = v.failingSince
      if (v.disable) {
        Object.assign(webhook, { active: false, disabledAt: o.at, disabledReason: v.disable })
        now.push({ webhook_id: row.webhook_id, tenant_id: o.job.tenant_id, reason: v.disable })
        for (const [id, other] of rows) if (other.webhook_id === row.webhook_id) rows.set(id, { ...dropQueued(other), webhook_id: other.webhook_id })
        // webhook.disabled: one pending delivery, due now, to each other subscription that receives() it (every one here asks for `*`).
        for (const [id, h] of webhooks) {
          if (!receives({ active: h.active ? 1 : 0, deleted_at: null, events: '["*"]' }, WEBHOOK_DISABLED)) continue
          rows.set(`wd:${row.webhook_id}:${id}`, {
            status: 'pending', attempts: 0, retries: 0, manual: 0, next_retry_at: null, due_at: o.at, delivered_at: null, response_code: null,
            last_attempt_at: null, locked_by: null, locked_until: null, webhook_id: id,
          })
        }
      }
    }
    disabled.push(now)
  }
  const queued: QueuedWebhook[] = []
  for (const id of webhooks.keys()) {
    const mine = [...rows.values()].filter((r) => r.webhook_id === id)
    if (mine.some((r) => r.due_at !== null)) queued.push({ webhook_id: id, tenant_id: tenantOf(id), ...queuedSummary(mine, claim.now, READY_CAP) })
  }
  const claimed: string[] = []
  for (const [id, row] of rows) {
    if (!isClaimable(row, claim.now)) continue
    const live = webhooks.get(row.webhook_id)!.active
    if (live) claimed.push(id)
    rows.set(id, { ...claimedBy(row, claim.owner, claim.leaseUntil, live), webhook_id: row.webhook_id })
  }
  return { attempts, recorded, disabled, queued, claimed }
}

/** Sorted by code unit here: a PostgreSQL collation may order text otherwise. */
function _sort<T>(xs: T[], key: (x: T) => string): T[] {
  return [...xs].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
}

function _pick(r: QueueState & { id: string; webhook_id: string }) {
  const out: Record<string, unknown> = { id: r.id, webhook_id: r.webhook_id }
  for (const c of QUEUE_COLUMNS) out[c] = r[c]
  return out
}
