import { sql, type Kysely, type Transaction } from 'kysely'
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { ClaimFailed, READY_CAP, type Claim, type Claimed, type CycleResult, type DeliveryStore, type Disabled, type HealthPolicy, type Job, type Outcome, type QueuedWebhook } from '../../delivery/port.ts'
import { statsDeltas, type StatsDelta } from '../attempt-stats.ts'
import { DROP_BATCH } from '../../db/drop-queue.ts'
import { rerunRetryable } from './common.ts'
import { storedHeaders } from '../../delivery/stored-headers.ts'
import type { Database, WebhookRow } from '../../db/schema.ts'
import { dropQueue, pgDropBatch } from './drop-queue.ts'
import { attemptTrigger } from '../../delivery/rules/attempt.ts'
import { endpointHealth } from '../../delivery/rules/health.ts'
import { webhookDisabledEvent } from '../../delivery/webhook-disabled.ts'
import { writeEventPostgres } from './outbox.ts'

/**
 * The delivery worker's store on PostgreSQL, for any number of `serve` processes on one
 * database (see delivery/port.ts for what each call promises). A cycle is one transaction:
 * outcomes recorded, then due deliveries claimed with `FOR UPDATE SKIP LOCKED`, so two
 * processes never lease the same delivery and never wait for each other's rows. Leases are
 * never freed at start: another process may hold them; a dead process's leases expire.
 * Due work a process cannot take itself (its worker's limits reached, or it is stopping) is
 * announced with NOTIFY and heard with LISTEN by the others; what it takes itself is not.
 */

const CHANNEL = 'travelops_work'
type Db = Kysely<Database>
type Tx = Transaction<Database>

export function pgDeliveryStore(db: Db, url: string, health: HealthPolicy = { disableAfterMs: 0 }): DeliveryStore & { announce(): void } {
  // `db`: the engine's delivery pool, planned with DELIVERY_PLANNER (engine.ts).
  let announcing = false
  // Signs this store's announcements: they are for the other processes (this one's worker
  // already knows what it could not take), so hearing its own NOTIFY would only cost a cycle.
  const self = randomUUID()
  return {
    recover: async () => {},
    cycle: (outcomes, claim) => _cycle(db, outcomes, health, claim),
    // A delivery another statement holds is skipped, never waited for: it is the one whose answer
    // a cycle is recording beside this (which ends its lease anyway). Waiting, the renewal and the
    // recording each held a row the other wanted — a deadlock PostgreSQL ended after a second by
    // failing the recording. The next renewal, a third of the
    // lease later, takes any other row skipped now.
    renew: async (ids, owner, until) => {
      if (ids.length === 0) return
      await sql`update deliveries set locked_until = ${until} where id = any(array(select id from deliveries
        where locked_by = ${owner} and id = any(${ids}) for update skip locked))`.execute(db)
    },
    release: (ids, owner) => _release(db, ids, owner),
    dropQueue: (tenantId, webhookId, stopped) => dropQueue(db, tenantId, webhookId, stopped),
    // One connection of its own, outside the pool, for as long as the worker runs.
    listen: async (wake) => {
      const client = new pg.Client({ connectionString: url, application_name: 'travelops listen' })
      client.on('error', () => {}) // a lost connection: the worker's 1 s poll still finds the work
      client.on('notification', (msg) => {
        if (msg.channel === CHANNEL && msg.payload !== self) wake()
      })
      await client.connect()
      await client.query(`LISTEN ${CHANNEL}`)
      return async () => {
        await client.end().catch(() => {})
      }
    },
    // When the worker leaves due work it cannot take: one NOTIFY at a time (a burst needs one
    // wake-up each way, not one per call), for the other processes' workers.
    announce: () => {
      if (announcing) return
      announcing = true
      setImmediate(() => {
        sql`select pg_notify(${CHANNEL}, ${self})`.execute(db).catch(() => {}).finally(() => (announcing = false))
      })
    },
  }
}

/**
 * A recording PostgreSQL ends as a deadlock's victim is run again (from its start: it was rolled
 * back) rather than left for its deliveries to be sent again once their leases expire. A cycle
 * that records failures takes its subscriptions' rows first, in the order of their ids (below),
 * and the one statement that records successes takes them before its deliveries' (the test
 * delivery-locks.test.ts checks two of them in opposite orders); what can still cross a
 * recording is a statement that takes several of the deliveries being recorded in another
 * order, an operator's requeue for one. Each try that ends this way has cost PostgreSQL's
 * `deadlock_timeout` (1 s by default).
 */
const _RECORD_TRIES = 5

async function _cycle(db: Db, outcomes: Outcome[], health: HealthPolicy, claim?: Claim): Promise<CycleResult> {
  const { batched, oneByOne } = _split(outcomes)
  if (oneByOne.length === 0) {
    // Nothing to record but successes: no transaction. Their recording is one statement, and
    // the claim (the plan reads the queue, one statement claims) runs beside it on other
    // connections: each statement is atomic, the claim checks every condition again on the rows
    // it locks and leaves alone the deliveries being recorded (even one whose lease ran out), so
    // the two never touch the same row. A cycle is two round trips instead of four.
    const recording = batched.map((o) => o.job.id)
    const [recorded, claimed] = await Promise.allSettled([
      rerunRetryable(_RECORD_TRIES, () => _recordDelivered(db, batched)),
      claim ? _queued(db, claim).then((queued) => _claimAll(db, claim.plan(queued, claim.now), claim, recording)) : [],
    ])
    if (recorded.status === 'rejected') {
      // The worker takes a failed cycle for one that claimed nothing: what the claim beside it
      // leased is given back, due again at once, rather than left unsent until its lease expires.
      if (claim && claimed.status === 'fulfilled') await _release(db, claimed.value.map((j) => j.id), claim.owner).catch(() => {})
      throw recorded.reason
    }
    if (claimed.status === 'rejected') throw new ClaimFailed(claimed.reason)
    return { jobs: claimed.value, disabled: [] }
  }
  return rerunRetryable(_RECORD_TRIES, () => db.transaction().execute(async (tx) => {
    // Every subscription this cycle may update (failing since, disabled), locked first and in
    // the order of their ids, as the API locks a subscription before its deliveries: recording
    // its failures one by one, each marking its subscription in turn, two processes whose
    // batches named the same subscriptions in other orders each held one and waited for the
    // other's (a deadlock: a receiver shared by several subscriptions going down).
    await sql`select id from webhooks where id = any(${[...new Set(outcomes.map((o) => o.job.webhook_id))]}::text[])
      order by id for no key update`.execute(tx)
    const disabled: Disabled[] = []
    const recorded: Outcome[] = []
    for (const o of oneByOne) {
      if (await _record(tx, o)) {
        recorded.push(o)
        const d = await _health(tx, o, health)
        if (d) disabled.push(d)
      }
    }
    // The successes last, with every attempt of the cycle added to attempt_stats by that one
    // statement: the transaction takes its attempt_stats rows at once, in key order (see _addStats()).
    await _recordDelivered(tx, batched, statsDeltas(recorded))
    const jobs = claim ? await _claimAll(tx, claim.plan(await _queued(tx, claim), claim.now), claim) : []
    return { jobs, disabled }
  }))
}

/** `owner`'s leases on these deliveries ended: due again at once, for any worker. */
async function _release(db: Db, ids: string[], owner: string): Promise<void> {
  if (ids.length === 0) return
  await sql`update deliveries set locked_until = null, locked_by = null where locked_by = ${owner} and id = any(${ids})`.execute(db)
}

async function _health(tx: Tx, o: Outcome, health: HealthPolicy): Promise<Disabled | undefined> {
  const id = o.job.webhook_id
  if (o.delivered) {
    await sql`update webhooks set failing_since = null where id = ${id} and failing_since is not null`.execute(tx)
    return undefined
  }
  await sql`update webhooks set failing_since = ${o.at} where id = ${id} and failing_since is null`.execute(tx)
  const w = (await sql<{ active: number; failing_since: string | null }>`select active, failing_since from webhooks where id = ${id}`.execute(tx)).rows[0]
  if (!w) return undefined
  const reason = endpointHealth({ active: w.active === 1, failingSince: w.failing_since }, o, health.disableAfterMs).disable
  if (!reason) return undefined
  const row = (await sql<WebhookRow>`update webhooks set active = 0, disabled_at = ${o.at}, disabled_reason = ${reason}, updated_at = ${o.at}
    where id = ${id} returning *`.execute(tx)).rows[0]!
  await pgDropBatch(tx, o.job.tenant_id, id) // the first batch of its queue; the worker drops the rest (dropQueue())
  // CONTRACT §15: `webhook.disabled`, in this transaction, through the outbox writer every event
  // goes through; the claim at the end of this cycle finds its deliveries due.
  const event = webhookDisabledEvent(row, o.at)
  await writeEventPostgres(tx, event)
  return { webhook_id: id, tenant_id: o.job.tenant_id, reason, event_id: event.id }
}

/** What the claim plans from: the subscriptions it was given (the worker's fast path), or the queue read. */
async function _queued(db: Db | Tx, claim: Claim): Promise<QueuedWebhook[]> {
  return claim.queued ?? queuedWebhooks(db, claim.now)
}

/** @internal Subscriptions with queued deliveries: a skip scan over deliveries_webhook_due, as on SQLite (exported for the test that reads its plan). */
export async function queuedWebhooks(db: Db | Tx, now: string): Promise<QueuedWebhook[]> {
  const rows = await sql<QueuedWebhook>`
    with recursive webhook_ids(id) as (
      select (select webhook_id from deliveries where due_at is not null order by webhook_id limit 1)
      union all
      select (select webhook_id from deliveries where due_at is not null and webhook_id > webhook_ids.id order by webhook_id limit 1)
      from webhook_ids where webhook_ids.id is not null)
    select webhook_ids.id as webhook_id, w.tenant_id as tenant_id,
      (select due_at from deliveries where webhook_id = webhook_ids.id and due_at is not null and (locked_until is null or locked_until < ${now})
        order by due_at limit 1) as due,
      (select count(*) from (select 1 from deliveries where webhook_id = webhook_ids.id and due_at is not null and due_at <= ${now}
        and (locked_until is null or locked_until < ${now}) limit ${READY_CAP}) r)::int as ready
    from webhook_ids join webhooks w on w.id = webhook_ids.id where webhook_ids.id is not null`.execute(db)
  return rows.rows
}

/**
 * Leases what the plan asks for in one statement whatever the number of subscriptions: up to
 * each live subscription's limit of due, unleased deliveries (each one's oldest first, `FOR
 * UPDATE SKIP LOCKED`), returned with their events and their subscription's url, secret, headers
 * and retry count. A planned subscription that is no longer active has its due deliveries dropped
 * by the same statement instead (nothing sent; never-attempted ones end `failed`), at most
 * DROP_BATCH a cycle (the drop that made it inactive takes care of its whole queue). `recorded`:
 * deliveries whose outcome is being recorded beside this claim, left alone, as are `c.exclude`.
 */
async function _claimAll(db: Db | Tx, plan: { webhook_id: string; limit: number }[], c: Claim, recorded: string[] = []): Promise<Job[]> {
  const wanted = plan.filter((w) => w.limit > 0)
  if (wanted.length === 0) return []
  const recording = c.exclude?.length ? [...recorded, ...c.exclude] : recorded
  const claimed = await claimRows(db, wanted, c, recording)
  const order = new Map(wanted.map((w, i) => [w.webhook_id, i]))
  claimed.sort((a, b) => order.get(a.webhook_id)! - order.get(b.webhook_id)!)
  const headers = new Map<string, Record<string, string>>()
  return claimed.map(({ payload, event_at, url, secret, headers: stored, retry_count, ...row }) => {
    let h = headers.get(row.webhook_id)
    if (!h) headers.set(row.webhook_id, (h = storedHeaders(stored)))
    return { ...row, owner: c.owner, url, secret, headers: h, retryCount: retry_count, payload, eventAt: event_at }
  })
}

type _ClaimedRow = Claimed & { payload: string; event_at: string; url: string; secret: string; headers: string; retry_count: number }

/**
 * @internal The claim's one statement (see _claimAll()); exported for the test that reads its plan.
 * Rows are updated through `id = any(array(…))`, a batch of primary-key lookups: with `id in
 * (…)` the planner could join against the whole table (a sequential scan of every delivery)
 * when its statistics expected many due rows.
 */
export async function claimRows(db: Db | Tx, wanted: { webhook_id: string; limit: number }[], c: Claim, recording: string[]): Promise<_ClaimedRow[]> {
  return (await sql<_ClaimedRow>`
    with want(webhook_id, lim) as (select * from unnest(${wanted.map((w) => w.webhook_id)}::text[], ${wanted.map((w) => w.limit)}::int[])),
    targets as (select w.id, w.url, w.secret, w.headers, w.retry_count, w.active = 1 and w.deleted_at is null as live, want.lim
      from want join webhooks w on w.id = want.webhook_id),
    dropped as (update deliveries set due_at = null, next_retry_at = null, manual = 0, locked_until = null, locked_by = null,
        status = case when status = 'pending' then 'failed' else status end
      where id = any(array(select d.id from targets t join deliveries d on d.webhook_id = t.id where not t.live
        and d.due_at is not null and d.due_at <= ${c.now} and (d.locked_until is null or d.locked_until < ${c.now})
        and d.id <> all(${recording}::text[]) limit ${sql.lit(DROP_BATCH)} for update of d skip locked))),
    c as (update deliveries set locked_until = ${c.leaseUntil}, locked_by = ${c.owner}
      where id = any(array(select due.id from targets t cross join lateral (select id from deliveries where webhook_id = t.id
        and due_at is not null and due_at <= ${c.now} and (locked_until is null or locked_until < ${c.now}) and id <> all(${recording}::text[])
        order by due_at limit t.lim for update skip locked) due where t.live))
      returning id, tenant_id, webhook_id, event_id, event, attempts, retries, manual, next_retry_at, status)
    select c.*, e.payload, e.created_at as event_at, t.url, t.secret, t.headers, t.retry_count
    from c join events e on e.id = c.event_id join targets t on t.id = c.webhook_id`.execute(db)).rows
}

/**
 * Outcomes recorded by a few statements for the whole batch rather than three round trips each:
 * those of subscriptions whose every outcome in the batch is a success (the common case).
 * Outcomes of different subscriptions touch different rows, so the order between the two sets
 * does not matter; a subscription with a failure in the batch keeps the one-by-one path, where
 * each failure may disable the subscription before the next outcome is recorded.
 */
function _split(outcomes: Outcome[]): { batched: Outcome[]; oneByOne: Outcome[] } {
  const failing = new Set<string>()
  const seen = new Set<string>()
  for (const o of outcomes) {
    // A delivery twice in one batch (not expected: one lease, one attempt) keeps the exact order too.
    if (!o.delivered || seen.has(o.job.id)) failing.add(o.job.webhook_id)
    seen.add(o.job.id)
  }
  const batched: Outcome[] = []
  const oneByOne: Outcome[] = []
  for (const o of outcomes) (failing.has(o.job.webhook_id) ? oneByOne : batched).push(o)
  return { batched, oneByOne }
}

/**
 * What _record() and _health() do for a delivered outcome, for many at once, in one statement:
 * the attempt rows, added to attempt_stats with `recorded` (see _addStats()); the deliveries whose lease is still held back to the queue's rules (done,
 * or due again for a manual retry asked meanwhile; nothing queued for a subscription no longer
 * active); those whose lease was lost only counted and marked delivered; each subscription's
 * failing_since cleared. Every part reads the statement's one snapshot, as the statements in a
 * row did (each delivery is updated by one part only: its lease is held or it is not).
 */
async function _recordDelivered(db: Db | Tx, outcomes: Outcome[], recorded: StatsDelta[] = []): Promise<void> {
  if (outcomes.length === 0) {
    if (recorded.length > 0) await sql`with v as (select null::text as id, null::text as at, null::int as duration, null::int as code where false),
      ${_addStats(recorded)} select 1`.execute(db)
    return
  }
  const col = <T>(f: (o: Outcome) => T) => outcomes.map(f)
  await sql`with v as (
      select * from unnest(${col((o) => o.job.id)}::text[], ${col((o) => o.at)}::text[], ${col((o) => attemptTrigger(o.job))}::text[],
        ${col((o) => o.responseCode)}::int[], ${col((o) => o.durationMs)}::int[], ${col((o) => o.error)}::text[], ${col((o) => o.responseBody)}::text[],
        ${col((o) => o.retries)}::int[], ${col((o) => o.nextRetryAt)}::text[], ${col((o) => o.job.manual)}::int[], ${col((o) => o.job.owner)}::text[])
        as v(id, at, trigger, code, duration, error, body, retries, next, manual, owner)),
    logged as (insert into delivery_attempts (delivery_id, attempt, tenant_id, at, trigger, response_code, duration_ms, error, response_body)
      select d.id, d.attempts + 1, d.tenant_id, v.at, v.trigger, v.code, v.duration, v.error, v.body from v join deliveries d on d.id = v.id),
    held as (update deliveries d set status = 'delivered', delivered_at = v.at, attempts = d.attempts + 1,
        retries = v.retries, response_code = v.code, last_attempt_at = v.at, next_retry_at = case when w.active = 1 then v.next end,
        due_at = case when w.active <> 1 then null when d.manual > v.manual then v.at else v.next end,
        manual = case when w.active = 1 then greatest(d.manual - v.manual, 0) else 0 end,
        locked_until = null, locked_by = null
      from webhooks w, v where w.id = d.webhook_id and d.id = v.id and d.locked_by = v.owner),
    lost as (update deliveries d set attempts = d.attempts + 1, last_attempt_at = v.at, response_code = v.code, status = 'delivered', delivered_at = v.at
      from v where d.id = v.id and d.locked_by is distinct from v.owner),
    ${_addStats(recorded)}
    update webhooks set failing_since = null
    where id in (select d.webhook_id from v join deliveries d on d.id = v.id) and failing_since is not null`.execute(db)
}

/**
 * The CTE `stats` of a recording statement: attempt_stats gains the attempts `logged` inserts
 * (those of `v` whose delivery exists, read through the same join) and `recorded` (attempts
 * the transaction inserted before). Its rows are taken in key order: two cycles adding to the
 * same rows (workers of several processes sending to one subscription) wait for each other in
 * line, never in a circle. Read committed, so a row another cycle added to meanwhile is added to
 * again after that one commits.
 */
function _addStats(recorded: StatsDelta[]) {
  const col = <T>(i: number) => recorded.map((r) => r[i] as T)
  return sql`stats as (insert into attempt_stats (tenant_id, hour, webhook_id, duration_ms, n, ok)
      select tenant_id, hour, webhook_id, duration_ms, sum(n), sum(ok) from (
        select d.tenant_id, substr(v.at, 1, 13) as hour, d.webhook_id, v.duration as duration_ms, 1 as n,
          case when v.code between 200 and 299 then 1 else 0 end as ok
        from v join deliveries d on d.id = v.id
        union all
        select * from unnest(${col<string>(0)}::text[], ${col<string>(1)}::text[], ${col<string>(2)}::text[], ${col<number>(3)}::int[],
          ${col<number>(4)}::int[], ${col<number>(5)}::int[])) r
      group by tenant_id, hour, webhook_id, duration_ms order by tenant_id, hour, webhook_id, duration_ms
      on conflict (tenant_id, hour, webhook_id, duration_ms) do update set n = attempt_stats.n + excluded.n, ok = attempt_stats.ok + excluded.ok)`
}

/**
 * As on SQLite (engine/sqlite/delivery-store.ts): the attempt row, then the queue state if the lease is still
 * held, by the rule afterAttempt() (delivery/rules/queue-state.ts), as _recordDelivered() does;
 * test/db/delivery-rules-agree.test.ts holds both statements to it.
 */
async function _record(tx: Tx, o: Outcome): Promise<boolean> {
  const j = o.job
  const inserted = await sql`insert into delivery_attempts (delivery_id, attempt, tenant_id, at, trigger, response_code, duration_ms, error, response_body)
    select id, attempts + 1, tenant_id, ${o.at}, ${attemptTrigger(j)}, ${o.responseCode}, ${o.durationMs}, ${o.error}, ${o.responseBody}
    from deliveries where id = ${j.id}`.execute(tx)
  if (Number(inserted.numAffectedRows ?? 0) === 0) return false
  const state = o.delivered ? sql`status = 'delivered', delivered_at = ${o.at},` : sql`status = 'failed',`
  // Nothing queued for a subscription that stopped being active meanwhile (see engine/sqlite/delivery-store.ts).
  const held = await sql`update deliveries d set ${state} attempts = d.attempts + 1, retries = ${o.retries}, response_code = ${o.responseCode},
    last_attempt_at = ${o.at}, next_retry_at = case when w.active = 1 then ${o.nextRetryAt} end,
    due_at = case when w.active <> 1 then null when d.manual > ${j.manual} then ${o.at} else ${o.nextRetryAt} end,
    manual = case when w.active = 1 then greatest(d.manual - ${j.manual}, 0) else 0 end,
    locked_until = null, locked_by = null
    from webhooks w where w.id = d.webhook_id and d.id = ${j.id} and d.locked_by = ${j.owner}`.execute(tx)
  if (Number(held.numAffectedRows ?? 0) === 0) {
    const done = o.delivered ? sql`, status = 'delivered', delivered_at = ${o.at}` : sql``
    await sql`update deliveries set attempts = attempts + 1, last_attempt_at = ${o.at}, response_code = ${o.responseCode}${done} where id = ${j.id}`.execute(tx)
  }
  return true
}
