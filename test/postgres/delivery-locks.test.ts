import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { openDatabase, type OpenDb } from '../../src/db/connect.ts'
import { pgDeliveryStore } from '../../src/db/pg-delivery-store.ts'
import type { Claim, DeliveryStore, Job, Outcome } from '../../src/delivery/port.ts'
import { createKey } from '../../src/modules/keys/service.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { newPgDatabase } from '../helpers/engine.ts'
import { claimedJobs } from '../helpers/store.ts'

// The delivery worker's statements on PostgreSQL run side by side on different connections: a
// cycle records the answers of one batch while the same process renews the leases of every
// attempt in flight and claims the next batch. Found by the benchmark (BENCHMARKS.md, seventeenth
// session): a renewal waiting for a row the recording held, while the recording waited for one
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
    const key = await createKey(opened.db, { tenantId: tenant.id, scopes: ['*'] }, new Date())
    t = { tenantId: tenant.id, keyId: key.id }
    other = new pg.Client({ connectionString: url })
    await other.connect()
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
})
