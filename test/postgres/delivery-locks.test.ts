import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { type OpenDb } from '../../src/engine/port.ts'
import { openDatabase } from '../../src/engine/open.ts'
import { pgDeliveryStore } from '../../src/engine/postgres/delivery-store.ts'
import type { Claim, DeliveryStore, Job, Outcome } from '../../src/delivery/port.ts'
import { requeueDeliveries } from '../../src/delivery/requeue.ts'
import { createKey } from '../../src/modules/keys/service.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { newPgDatabase } from '../helpers/engine.ts'
import { claimedJobs, insertWebhook } from '../helpers/store.ts'
import { DEFAULT_CONFIG } from '../../src/config.ts'
import { withTx } from '../../src/engine/tx.ts'
import { emit } from '../../src/events/emit.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { createLogger } from '../../src/lib/logger.ts'

// The delivery worker's statements on PostgreSQL run side by side on different connections: a
// cycle records the answers of one batch while the same process renews the leases of every
// attempt in flight and claims the next batch. Found by the benchmark: a renewal waiting for a row the recording held, while the recording waited for one
// the renewal held, was a deadlock; PostgreSQL ended the recording after a second, and the batch
// the claim beside it had leased was never sent until its lease ran out 15 s later.
describe('delivery store on PostgreSQL: statements that run side by side', () => {
  const OWNER = 'delivery-locks-test'
  let url: string
  let opened: OpenDb
  let store: DeliveryStore
  let t: { tenantId: string; keyId: string }
  let other: pg.Client
  before(async () => {
    url = await newPgDatabase()
    opened = await openDatabase(url, { create: true, migrate: true })
    store = pgDeliveryStore(opened.db, url)
    const tenant = await createTenant(opened.db, 'Locks', new Date())
    const key = await createKey(opened.engine, { tenantId: tenant.id, scopes: ['*'] }, new Date())
    t = { tenantId: tenant.id, keyId: key.id }
    other = new pg.Client({ connectionString: url })
    await other.connect()
    // PostgreSQL ends, of two sessions waiting for each other, the one whose deadlock check runs
    // first: deadlock_timeout (1 s) after it began to wait. The tests below make the statement under
    // test wait first and this connection a few milliseconds later; on a loaded machine the two
    // checks could run in the other order and end this connection instead. Its check waits 30 s,
    // so the victim is always the statement under test. (SET needs a superuser: the run's server's.)
    await other.query("SET deadlock_timeout = '30s'")
  })
  after(async () => {
    await other?.end()
    await opened?.close()
  })

  const lease = async (id: string) => (await other.query<{ locked_by: string | null; locked_until: string | null }>(
    'SELECT locked_by, locked_until FROM deliveries WHERE id = $1', [id])).rows[0]!
  /** Resolves once some session of this database waits for a lock (the statement under test, when it does). */
  const someoneWaits = async (stop: { done: boolean }) => {
    const watcher = new pg.Client({ connectionString: url })
    await watcher.connect()
    try {
      while (!stop.done) {
        const { rows } = await watcher.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
        if (rows.length > 0) return 'waited for a lock' as const
        await new Promise((r) => setTimeout(r, 10))
      }
      return 'never waited' as const
    } finally {
      await watcher.end()
    }
  }

  test('a lease renewal does not wait for a delivery another statement holds (its answer being recorded)', async () => {
    const [held, free] = await claimedJobs(opened, store, t, OWNER, 2) as [Job, Job]
    const before = await lease(held.id)
    await other.query('BEGIN')
    try {
      await other.query('SELECT 1 FROM deliveries WHERE id = $1 FOR UPDATE', [held.id])
      const until = new Date(Date.now() + 600_000).toISOString()
      const stop = { done: false }
      const renewed = store.renew([held.id, free.id], OWNER, until).then(() => 'renewed' as const)
      const first = await Promise.race([renewed, someoneWaits(stop)])
      stop.done = true
      assert.equal(first, 'renewed', 'the renewal waited for the row lock of the statement beside it')
      assert.equal((await lease(free.id)).locked_until, until, 'the delivery nobody held is renewed')
    } finally {
      await other.query('COMMIT')
    }
    assert.deepEqual(await lease(held.id), before, 'the held one is left as it was: its recording ends the lease anyway')
  })

  test('a recording that fails gives back what the claim beside it leased: nothing waits for a lease to expire', async () => {
    const [sent] = await claimedJobs(opened, store, t, OWNER, 1) as [Job]
    // Due deliveries of another subscription, not claimed yet.
    const waiting = await claimedJobs(opened, store, t, 'someone-else', 2)
    await other.query('UPDATE deliveries SET locked_by = NULL, locked_until = NULL WHERE id = ANY($1)', [waiting.map((j) => j.id)])
    const at = new Date().toISOString()
    const outcome: Outcome = { job: sent, at, responseCode: 200, durationMs: 5, error: null, responseBody: 'ok', delivered: true, nextRetryAt: null, retries: 0 }
    const claim: Claim = {
      now: new Date().toISOString(), leaseUntil: new Date(Date.now() + 60_000).toISOString(), owner: OWNER,
      plan: (queued) => queued.filter((q) => q.webhook_id === waiting[0]!.webhook_id).map((q) => ({ webhook_id: q.webhook_id, limit: 2 })),
    }
    // The recording waits for a row lock here while the claim beside it leases the two; then it
    // fails (as when PostgreSQL picks it as a deadlock's victim).
    await other.query('BEGIN')
    let cycle: Promise<unknown>
    try {
      await other.query('SELECT 1 FROM deliveries WHERE id = $1 FOR UPDATE', [sent.id])
      cycle = store.cycle([outcome], claim)
      cycle.catch(() => {})
      let pid: number | undefined
      const deadline = Date.now() + 30_000
      for (;;) {
        if (Date.now() > deadline) throw new Error('the claim never leased the two, or the recording never waited for its row')
        const leased = (await other.query('SELECT count(*)::int AS n FROM deliveries WHERE id = ANY($1) AND locked_by = $2', [waiting.map((j) => j.id), OWNER])).rows[0].n
        const waits = (await other.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows
        if (leased === 2 && waits.length === 1) {
          pid = waits[0].pid
          break
        }
        await new Promise((r) => setTimeout(r, 10))
      }
      await other.query('SELECT pg_cancel_backend($1)', [pid])
    } finally {
      await other.query('ROLLBACK')
    }
    await assert.rejects(cycle, /canceling statement/)
    for (const j of waiting) assert.deepEqual(await lease(j.id), { locked_by: null, locked_until: null }, `${j.id} is claimable at once`)
    // The worker's next cycle claims them.
    const { jobs } = await store.cycle([], claim)
    assert.deepEqual(jobs.map((j) => j.id).sort(), waiting.map((j) => j.id).sort())
  })

  /** Until `n` sessions of this database wait for a lock (bounded). */
  const waiters = async (n: number) => {
    const deadline = Date.now() + 30_000
    for (;;) {
      const { rows } = await other.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
      if (rows.length >= n) return
      if (Date.now() > deadline) throw new Error(`${n} sessions never waited for a lock`)
      await new Promise((r) => setTimeout(r, 10))
    }
  }
  /** `hold` run in a transaction of `other` (a third connection) that is committed once it returns. */
  const committed = async <T>(hold: () => Promise<T>): Promise<T> => {
    await other.query('BEGIN')
    try {
      const held = await hold()
      await other.query('COMMIT')
      return held
    } catch (err) {
      await other.query('ROLLBACK')
      throw err
    }
  }
  /**
   * Watches, until `stop.done`, for two sessions of this database each waiting for the other (a
   * deadlock, before PostgreSQL ends it after `deadlock_timeout`); true if it saw one.
   */
  const deadlockSeen = async (stop: { done: boolean }) => {
    const watcher = new pg.Client({ connectionString: url })
    await watcher.connect()
    try {
      while (!stop.done) {
        const { rows } = await watcher.query<{ pid: number; by: number[] }>(
          'SELECT pid, pg_blocking_pids(pid) AS by FROM pg_stat_activity WHERE datname = current_database()')
        const by = new Map(rows.map((r) => [r.pid, r.by]))
        if (rows.some((r) => r.by.some((other) => by.get(other)?.includes(r.pid)))) return true
        await new Promise((r) => setTimeout(r, 10))
      }
      return false
    } finally {
      await watcher.end()
    }
  }
  /** A tenant of its own with these subscriptions (each to one event) and `events` of those events, due now. */
  const queue = async (webhooks: { event: 'order.created' | 'order.updated'; over?: Record<string, unknown> }[], events: ('order.created' | 'order.updated')[]) => {
    const tenant = await createTenant(opened.db, `Locks ${Math.random()}`, new Date())
    const key = await createKey(opened.engine, { tenantId: tenant.id, scopes: ['*'] }, new Date())
    const ids: string[] = []
    for (const h of webhooks) ids.push(await insertWebhook(opened.db, tenant.id, { events: JSON.stringify([h.event]), ...h.over }))
    const ctx = { db: opened.db, engine: opened.engine, clock: systemClock, config: DEFAULT_CONFIG, logger: createLogger('silent'), notify: () => {}, tenantId: tenant.id, keyId: key.id }
    for (const e of events) await withTx(opened.engine, (scope) => emit(scope, ctx, e, { id: 'ord_1' }))
    return ids
  }
  /** The oldest due delivery of each subscription, leased to `owner` by `s`. */
  const claimOne = async (s: DeliveryStore, owner: string, webhooks: string[]) => {
    const { jobs } = await s.cycle([], {
      now: new Date().toISOString(), leaseUntil: new Date(Date.now() + 60_000).toISOString(), owner,
      plan: (queued) => webhooks.map((id) => ({ webhook_id: id, limit: queued.some((q) => q.webhook_id === id) ? 1 : 0 })),
    })
    assert.equal(jobs.length, webhooks.length)
    return webhooks.map((id) => jobs.find((j) => j.webhook_id === id)!)
  }
  const answered = (job: Job, delivered: boolean): Outcome => ({
    job, at: new Date().toISOString(), responseCode: delivered ? 200 : 500, durationMs: 5, error: null, responseBody: delivered ? 'ok' : 'down',
    delivered, nextRetryAt: delivered ? null : new Date(Date.now() + 60_000).toISOString(), retries: delivered ? 0 : 1,
  })

  for (const delivered of [false, true]) {
    const what = delivered ? 'successes of the same two failing subscriptions' : 'the first failures of the same two subscriptions'
    test(`two processes recording ${what} in opposite orders do not deadlock`, async () => {
      // A receiver shared by two subscriptions goes down (each failure marks its subscription
      // failing, a row lock on it) or is back (each success clears the mark).
      const over = delivered ? { failing_since: new Date(Date.now() - 3_600_000).toISOString() } : {}
      const second = await openDatabase(url, { create: false, migrate: false })
      try {
        const store2 = pgDeliveryStore(second.db, url)
        const [w1, w2] = await queue([{ event: 'order.created', over }, { event: 'order.created', over }], ['order.created', 'order.created'])
        const [a, b] = await claimOne(store, 'process-1', [w1!, w2!])
        const [c, d] = await claimOne(store2, 'process-2', [w1!, w2!])
        const stop = { done: false }
        const { one, two, watched } = await committed(async () => {
          // Failures: each process takes its first subscription's row, then waits here for its
          // second delivery. Successes: both subscriptions are held (a tenant's change) while the
          // two recordings start; then both go on at once.
          if (delivered) await other.query('UPDATE webhooks SET updated_at = updated_at WHERE id = ANY($1)', [[w1, w2]])
          else await other.query('SELECT 1 FROM deliveries WHERE id = ANY($1) FOR UPDATE', [[b!.id, c!.id]])
          const watched = deadlockSeen(stop)
          const one = store.cycle([answered(a!, delivered), answered(b!, delivered)])
          const two = store2.cycle([answered(d!, delivered), answered(c!, delivered)])
          one.catch(() => {})
          two.catch(() => {})
          await waiters(2)
          return { one, two, watched }
        })
        const settled = await Promise.allSettled([one, two])
        stop.done = true
        assert.equal(await watched, false, 'the two recordings waited for each other')
        assert.deepEqual(settled.map((r) => r.status === 'rejected' ? String(r.reason) : r.status), ['fulfilled', 'fulfilled'])
        const rows = (await other.query('SELECT attempts, status FROM deliveries WHERE id = ANY($1)', [[a!.id, b!.id, c!.id, d!.id]])).rows
        const status = delivered ? 'delivered' : 'failed'
        assert.deepEqual(rows.map((r) => [r.attempts, r.status]), [[1, status], [1, status], [1, status], [1, status]])
        const marked = (await other.query('SELECT count(*)::int AS n FROM webhooks WHERE id = ANY($1) AND failing_since IS NOT NULL', [[w1, w2]])).rows[0].n
        assert.equal(marked, delivered ? 0 : 2)
      } finally {
        await second.close()
      }
    })
  }

  for (const delivered of [true, false]) {
    test(`a tenant pausing a subscription while ${delivered ? 'a success' : 'a first failure'} of it is recorded: no deadlock`, async () => {
      // The API takes the subscription, then drops its queued deliveries; the recording must not
      // hold one of those while it waits for the subscription (a success clears a failing mark,
      // a failure sets one).
      const over = delivered ? { failing_since: new Date(Date.now() - 3_600_000).toISOString() } : {}
      const [w] = await queue([{ event: 'order.updated', over }], ['order.updated'])
      const [job] = await claimOne(store, OWNER, [w!])
      const { cycle } = await committed(async () => {
        await other.query('UPDATE webhooks SET active = 0 WHERE id = $1', [w])
        const cycle = store.cycle([answered(job!, delivered)])
        cycle.catch(() => {})
        await waiters(1)
        const stop = { done: false }
        const watched = deadlockSeen(stop)
        await other.query(`UPDATE deliveries SET due_at = NULL, next_retry_at = NULL, manual = 0,
          status = CASE WHEN status = 'pending' THEN 'failed' ELSE status END WHERE webhook_id = $1 AND due_at IS NOT NULL`, [w])
        stop.done = true
        assert.equal(await watched, false, 'the recording and the pause waited for each other')
        return { cycle }
      })
      await cycle
      const row = (await other.query('SELECT attempts, status, due_at FROM deliveries WHERE id = $1', [job!.id])).rows[0]
      assert.deepEqual([row.attempts, row.status, row.due_at], [1, delivered ? 'delivered' : 'failed', null])
    })
  }

  for (const delivered of [true, false]) {
    test(`a recording of ${delivered ? 'successes' : 'failures'} that PostgreSQL ends as a deadlock's victim is recorded again, not left for its lease to run out`, async () => {
      // An operator's requeue takes the same deliveries in the other order: the recording holds
      // the first and waits for the second, the requeue holds the second and wants the first.
      // PostgreSQL ends the recording, which waited first.
      const [w] = await queue([{ event: 'order.updated' }], ['order.updated', 'order.updated'])
      const { jobs } = await store.cycle([], {
        now: new Date().toISOString(), leaseUntil: new Date(Date.now() + 60_000).toISOString(), owner: OWNER,
        plan: () => [{ webhook_id: w!, limit: 2 }],
      })
      const [first, second] = jobs.sort((x, y) => x.event_id.localeCompare(y.event_id)) as [Job, Job]
      const { cycle } = await committed(async () => {
        await other.query('UPDATE deliveries SET manual = manual WHERE id = $1', [second.id])
        const cycle = store.cycle([answered(first, delivered), answered(second, delivered)])
        cycle.catch(() => {})
        await waiters(1)
        const stop = { done: false }
        const watched = deadlockSeen(stop)
        await other.query('UPDATE deliveries SET manual = manual WHERE id = $1', [first.id])
        stop.done = true
        assert.equal(await watched, true, 'the requeue and the recording never waited for each other')
        return { cycle }
      })
      await cycle
      const rows = (await other.query('SELECT attempts, status FROM deliveries WHERE id = ANY($1)', [[first.id, second.id]])).rows
      const status = delivered ? 'delivered' : 'failed'
      assert.deepEqual(rows.map((r) => [r.attempts, r.status]), [[1, status], [1, status]])
      assert.equal((await other.query('SELECT count(*)::int AS n FROM delivery_attempts WHERE delivery_id = ANY($1)', [[first.id, second.id]])).rows[0].n, 2)
    })
  }

  test('a requeue (the API\'s retry and replay, the CLI\'s) that PostgreSQL ends as a deadlock\'s victim is run again, not refused', async () => {
    // The requeue takes the first of two finished deliveries and waits for the second, which the
    // worker's recording holds; the recording then wants the first. The requeue waited first, so
    // PostgreSQL ends it. Which row is the statement's first is its plan's to say (a sequential
    // scan takes them as they lie in the table): the same statement, run once in a transaction
    // rolled back, says it by the order of its RETURNING.
    const [w] = await queue([{ event: 'order.updated' }], ['order.updated', 'order.updated'])
    const ids = (await other.query<{ id: string }>("UPDATE deliveries SET status = 'failed', due_at = NULL WHERE webhook_id = $1 RETURNING id", [w])).rows.map((r) => r.id).sort()
    const rolledBack = new Error('rolled back')
    let order: string[] = []
    await opened.db.transaction().execute(async (trx) => {
      order = await requeueDeliveries({ db: trx, engine: { rerunOnConflict: (run) => run() } }, { ids }, new Date())
      throw rolledBack
    }).catch((err: unknown) => { if (err !== rolledBack) throw err })
    assert.deepEqual([...order].sort(), ids)
    const [first, second] = order as [string, string]
    const { requeue } = await committed(async () => {
      await other.query('UPDATE deliveries SET manual = manual WHERE id = $1', [second])
      const requeue = requeueDeliveries(opened, { ids }, new Date())
      requeue.catch(() => {})
      await waiters(1)
      const stop = { done: false }
      const watched = deadlockSeen(stop)
      await other.query('UPDATE deliveries SET manual = manual WHERE id = $1', [first])
      stop.done = true
      assert.equal(await watched, true, 'the requeue and the recording never waited for each other')
      return { requeue }
    })
    assert.deepEqual((await requeue).sort(), ids)
    const rows = (await other.query('SELECT manual FROM deliveries WHERE id = ANY($1) ORDER BY id', [ids])).rows
    assert.deepEqual(rows.map((r) => r.manual), [1, 1], 'queued once each')
  })
})
