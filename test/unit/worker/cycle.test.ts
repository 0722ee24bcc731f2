import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ClaimFailed, type Job, type Outcome } from '../../../src/delivery/port.ts'
import { createCycles } from '../../../src/delivery/worker/cycle.ts'
import { FakeStore, fakeCore, job } from '../../helpers/fake-delivery-store.ts'

// The cycle (src/delivery/worker/cycle.ts) against a store in memory: one store call records the
// answers of a turn and, when the queue must be read, claims from it; `start` here only takes the
// slot, as an attempt does.

const turn = () => new Promise<void>((r) => setImmediate(r))
const outcome = (j: Job, delivered: boolean): Outcome => ({
  job: j, at: '2026-11-29T08:00:00.000Z', responseCode: delivered ? 200 : 500, durationMs: 5, error: null, responseBody: null, delivered, nextRetryAt: null, retries: 0,
})

function setup(slots = { total: 8, perTenant: 4, perWebhook: 2, maxPerWebhook: 2 }) {
  const store = new FakeStore()
  const core = fakeCore(store, { slots })
  const started: Job[] = []
  const cycles = createCycles(core, 1000, (j) => {
    core.slots.count(j, 1)
    started.push(j)
  })
  /** The cycles asked for so far, run to their end (one asked for by a cycle runs a turn after it). */
  const settled = async () => {
    for (let i = 0; i < 3; i++) {
      await turn()
      while (cycles.ticking) await cycles.ticking
    }
  }
  return { store, core, started, cycles, settled }
}

describe('cycle', () => {
  test('the first cycle reads the queue and starts what its plan dealt, fairly and within the limits', async () => {
    const { store, started, cycles, settled } = setup()
    store.queue.push(job('ten_a', 'wh_1'), job('ten_a', 'wh_1'), job('ten_a', 'wh_1'), job('ten_b', 'wh_2'))
    cycles.run()
    await settled()
    assert.equal(store.cycles.length, 1)
    assert.equal(store.cycles[0]!.claim?.queued, undefined, 'a read of the queue')
    assert.deepEqual(started.map((j) => j.webhook_id).sort(), ['wh_1', 'wh_1', 'wh_2'])
    assert.equal(store.announced, 1, 'its own read left due work undealt: announced')
  })

  test('the answers of one turn are recorded by one cycle, which settles each; successes alone read nothing', async () => {
    const { store, cycles, settled } = setup()
    cycles.run()
    await settled()
    const done = [job('ten_a', 'wh_1'), job('ten_a', 'wh_2')].map((j) => cycles.record(outcome(j, true)))
    await Promise.all(done)
    await settled()
    assert.equal(store.cycles.length, 2)
    assert.equal(store.cycles[1]!.outcomes.length, 2)
    assert.equal(store.cycles[1]!.claim, undefined, 'every delivery queued since was named by its commit')
  })

  test('a failure reads the queue (its retry may be due), in the same store call', async () => {
    const { store, cycles, settled } = setup()
    cycles.run()
    await settled()
    await cycles.record(outcome(job('ten_a', 'wh_1'), false))
    await settled()
    assert.equal(store.cycles[1]!.outcomes.length, 1)
    assert.notEqual(store.cycles[1]!.claim, undefined)
  })

  test('a cycle asked for while one runs runs right after it', async () => {
    const { store, core, cycles, settled } = setup()
    let open!: () => void
    store.hold = new Promise((r) => { open = r })
    cycles.run()
    await turn()
    core.reads.whenFree()
    cycles.run()
    assert.equal(store.cycles.length, 0)
    open()
    await settled()
    assert.equal(store.cycles.length, 2)
    assert.notEqual(store.cycles[1]!.claim, undefined)
  })

  test('a claim that failed after its recording settles the answers and reads again in the next cycle', async () => {
    const { store, cycles, settled } = setup()
    cycles.run()
    await settled()
    store.fail = new ClaimFailed(new Error('serialization failure'))
    await cycles.record(outcome(job('ten_a', 'wh_1'), false))
    await settled()
    assert.equal(store.cycles.length, 1, 'the failed call noted nothing')
    cycles.run()
    await settled()
    assert.notEqual(store.cycles[1]!.claim, undefined)
  })

  test('a subscription a cycle disabled has the rest of its queue dropped beside the loop', async () => {
    const { store, core, cycles, settled } = setup()
    store.disable = [{ webhook_id: 'wh_1', tenant_id: 'ten_a', reason: 'gone', event_id: 'evt_1' }]
    await cycles.record(outcome(job('ten_a', 'wh_1'), false))
    await settled()
    await Promise.all(core.background)
    assert.deepEqual(store.dropped, ['wh_1'])
  })

  test('a fast claim beside a cycle leaves out the deliveries that cycle is recording', async () => {
    const { store, core, cycles, settled } = setup()
    let open!: () => void
    store.hold = new Promise((r) => { open = r })
    const j = job('ten_a', 'wh_1')
    const done = cycles.record(outcome(j, true))
    await turn()
    assert.deepEqual(core.recording, [j.id])
    open()
    await done
    await settled()
    assert.deepEqual(core.recording, [])
  })
})
