import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { startWorker } from '../../../src/delivery/worker.ts'
import { createLogger } from '../../../src/lib/logger.ts'
import { FakeSender, FakeStore, job } from '../../helpers/fake-delivery-store.ts'

// The worker's start and end (src/delivery/worker/lifecycle.ts), through startWorker over a store
// in memory and a sender whose answers the test gives. The renewal runs on node:test's mock
// interval, moved by the test.

const NOW = new Date('2026-11-29T08:00:00.000Z')
const turn = () => new Promise<void>((r) => setImmediate(r))

function setup(sender = new FakeSender()) {
  const store = new FakeStore()
  const w = startWorker({ store, clock: { now: () => NOW }, logger: createLogger('silent'), sender, userAgent: 'travelops/test', retryBaseMs: 60_000, timeoutMs: 2000, pollMs: 60_000, leaseMs: 3000 })
  /** Until the store recovered and listens (lease() is offered from then on). */
  const started = async () => {
    for (let i = 0; i < 10 && !w.lease('ten_a'); i++) await turn()
  }
  return { store, sender, w, started }
}

describe('lifecycle', () => {
  test('the store recovers, then listens; no lease is offered before; an announcement heard reads the queue', async () => {
    const { store, w, started } = setup()
    assert.equal(w.lease('ten_a'), null)
    assert.equal(store.recovered.length, 1)
    await started()
    assert.equal(store.listening, true)
    assert.equal(w.lease('ten_a')?.owner, store.recovered[0])
    const reads = () => store.cycles.filter((c) => c.claim && !c.claim.queued).length
    for (let i = 0; i < 10 && reads() === 0; i++) await turn() // the read at start
    store.heard!()
    for (let i = 0; i < 10 && reads() === 1; i++) await turn()
    assert.equal(reads(), 2)
    await w.stop(0)
    assert.equal(store.listening, false)
  })

  test('leases of attempts in flight are renewed every third of their term', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] })
    const { store, sender, w, started } = setup()
    await started()
    const j = job('ten_a', 'wh_1')
    w.wake({ tenantId: 'ten_a', webhookIds: ['wh_1'], jobs: [j] })
    assert.equal(sender.sent.length, 1)
    t.mock.timers.tick(999)
    assert.deepEqual(store.renewed, [])
    t.mock.timers.tick(1)
    assert.deepEqual(store.renewed, [{ ids: [j.id], until: '2026-11-29T08:00:03.000Z' }])
    sender.answer(0, { responseCode: 200 })
    const stopped = w.stop(0)
    await stopped
    t.mock.timers.tick(5000)
    assert.equal(store.renewed.length, 1, 'nothing in flight, then stopped: no renewal')
  })

  test('stop() within the grace: the attempts in flight end and are recorded; nothing is given back', async () => {
    const { store, sender, w, started } = setup()
    await started()
    const j = job('ten_a', 'wh_1')
    w.wake({ tenantId: 'ten_a', webhookIds: ['wh_1'], jobs: [j] })
    const stopped = w.stop(60_000)
    assert.equal(w.lease('ten_a'), null, 'nothing more is leased once stopping')
    sender.answer(0, { responseCode: 200 })
    await stopped
    assert.deepEqual(store.cycles.flatMap((c) => c.outcomes.map((o) => o.job.id)), [j.id])
    assert.deepEqual(store.released, [])
    assert.equal(sender.closed, true)
  })

  test('stop() past the grace: attempts still waiting are aborted and given back, not recorded', async () => {
    const { store, sender, w, started } = setup()
    await started()
    const jobs = [job('ten_a', 'wh_1'), job('ten_a', 'wh_2')]
    w.wake({ tenantId: 'ten_a', webhookIds: ['wh_1', 'wh_2'], jobs })
    sender.answer(0, { responseCode: 500 }) // the first answers; the second never does
    const recorded = () => store.cycles.flatMap((c) => c.outcomes.map((o) => o.job.id))
    for (let i = 0; i < 10 && recorded().length === 0; i++) await turn()
    await w.stop(0)
    assert.deepEqual(recorded(), [jobs[0]!.id])
    assert.deepEqual(store.released, [[jobs[1]!.id]])
    assert.ok(store.announced >= 1, 'given-back work is announced')
    assert.equal(sender.closed, true)
  })

  test('leased jobs that arrive once stopping are given back, not started', async () => {
    const { store, sender, w, started } = setup()
    await started()
    const stopped = w.stop(0)
    const j = job('ten_a', 'wh_1')
    w.wake({ tenantId: 'ten_a', webhookIds: ['wh_1'], jobs: [j] })
    await stopped
    assert.equal(sender.sent.length, 0)
    assert.deepEqual(store.released, [[j.id]])
  })
})
