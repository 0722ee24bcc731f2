import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Job } from '../../../src/delivery/port.ts'
import { createFastPath } from '../../../src/delivery/worker/fast-path.ts'
import { createGiveBack } from '../../../src/delivery/worker/give-back.ts'
import { FakeStore, fakeCore, job } from '../../helpers/fake-delivery-store.ts'

// The fast path (src/delivery/worker/fast-path.ts, give-back.ts) against a store in memory: what
// lease() offers, what leased jobs start and what is given back, and the fast claim of what a
// commit named. `start` here only takes the slot, as an attempt does when it starts.

const turn = () => new Promise<void>((r) => setImmediate(r))

function setup(slots = { total: 8, perTenant: 4, perWebhook: 2, maxPerWebhook: 2 }) {
  const store = new FakeStore()
  const core = fakeCore(store, { slots })
  const started: Job[] = []
  const giveBack = createGiveBack(core)
  const fast = createFastPath(core, (j) => {
    core.slots.count(j, 1)
    started.push(j)
  }, () => void core.looks.count++, giveBack.handBack)
  return { store, core, started, fast, giveBack }
}

describe('fast path', () => {
  test('lease() is offered once started, to a tenant not full, while not behind or stopping', () => {
    const { core, fast } = setup()
    assert.deepEqual(fast.lease('ten_a'), { owner: 'wrk_test', until: '2026-11-29T08:00:15.000Z' })
    core.started = false
    assert.equal(fast.lease('ten_a'), null)
    core.started = true
    core.slots.markFull('ten_a')
    assert.equal(fast.lease('ten_a'), null)
    assert.notEqual(fast.lease('ten_b'), null)
    core.slots.plan([{ webhook_id: 'wh_x', tenant_id: 'ten_x', due: '2026-11-29T08:00:00.000Z', ready: 32 }, { webhook_id: 'wh_y', tenant_id: 'ten_y', due: '2026-11-29T08:00:00.000Z', ready: 32 }, { webhook_id: 'wh_z', tenant_id: 'ten_z', due: '2026-11-29T08:00:00.000Z', ready: 32 }, { webhook_id: 'wh_w', tenant_id: 'ten_w', due: '2026-11-29T08:00:00.000Z', ready: 32 }, { webhook_id: 'wh_v', tenant_id: 'ten_v', due: '2026-11-29T08:00:00.000Z', ready: 32 }], '2026-11-29T08:00:00.000Z')
    assert.equal(core.slots.behind, true)
    assert.equal(fast.lease('ten_b'), null, 'behind: only the round-robin deals')
  })

  test('lease() names the subscriptions at their limit in skip', () => {
    const { core, fast } = setup()
    core.slots.count(job('ten_a', 'wh_1'), 1)
    core.slots.count(job('ten_a', 'wh_1'), 1)
    assert.deepEqual(fast.lease('ten_a')?.skip, ['wh_1'])
  })

  test('leased jobs start as far as the limits allow; the rest are given back in one statement and announced', async () => {
    const { store, core, started, fast } = setup()
    const jobs = [job('ten_a', 'wh_1'), job('ten_a', 'wh_1'), job('ten_a', 'wh_1'), job('ten_a', 'wh_2')]
    fast.wake({ tenantId: 'ten_a', webhookIds: jobs.map((j) => j.webhook_id), jobs })
    assert.deepEqual(started.map((j) => j.id), [jobs[0]!.id, jobs[1]!.id, jobs[3]!.id])
    assert.equal(store.cycles.length, 0, 'leased jobs cost no claim')
    assert.deepEqual(store.released, [], 'given back after the turn, with what else it hands back')
    fast.wake({ tenantId: 'ten_a', webhookIds: ['wh_1'], jobs: [job('ten_a', 'wh_1', { id: 'dlv_more' })] })
    await turn()
    await Promise.all(core.background)
    assert.deepEqual(store.released, [[jobs[2]!.id, 'dlv_more']])
    assert.equal(store.announced, 1)
    assert.equal(core.slots.isFull('ten_a'), true, 'its last leased deliveries found no room at all')
  })

  test('a commit\'s named subscriptions are claimed in one call without a queue read, leaving out what a cycle is recording', async () => {
    const { store, core, started, fast } = setup()
    const queued = [job('ten_a', 'wh_1'), job('ten_a', 'wh_1'), job('ten_b', 'wh_2')]
    store.queue.push(...queued)
    core.recording = [queued[0]!.id]
    fast.wake({ tenantId: 'ten_a', webhookIds: ['wh_1', 'wh_1'] })
    fast.wake({ tenantId: 'ten_b', webhookIds: ['wh_2'] }) // while the first claim is out: the next one
    for (let i = 0; i < 100 && store.cycles.length < 2; i++) await turn()
    await fast.drain()
    assert.equal(store.cycles.length, 2)
    const [first, second] = store.cycles
    assert.deepEqual(first!.claim?.queued?.map((q) => [q.webhook_id, q.ready]), [['wh_1', 2]])
    assert.deepEqual(first!.claim?.exclude, [queued[0]!.id])
    assert.deepEqual(first!.outcomes, [])
    assert.deepEqual(second!.claim?.queued?.map((q) => q.webhook_id), ['wh_2'])
    assert.deepEqual(started.map((j) => j.id), [queued[1]!.id, queued[2]!.id])
    assert.equal(core.slots.byWebhook.get('wh_1'), 1, 'the reservation was released, the attempt holds its slot')
    assert.equal(store.announced, 0, 'work this process claims itself is announced to no one')
  })

  test('what a fast claim cannot take is announced and left to a read', async () => {
    const { store, core, fast } = setup()
    store.queue.push(job('ten_a', 'wh_1'), job('ten_a', 'wh_1'), job('ten_a', 'wh_1'))
    fast.wake({ tenantId: 'ten_a', webhookIds: ['wh_1', 'wh_1', 'wh_1'] })
    await fast.drain()
    assert.equal(store.announced, 1)
    assert.equal(core.reads.begin(false, false, false), true)
  })

  test('behind, a commit costs no claim: the work is announced and read when a slot frees', async () => {
    const { store, core, fast } = setup({ total: 1, perTenant: 1, perWebhook: 1, maxPerWebhook: 1 })
    core.reads.begin(false, false, false) // the read at start is done
    core.slots.plan([{ webhook_id: 'wh_x', tenant_id: 'ten_x', due: '2026-11-29T08:00:00.000Z', ready: 1 }, { webhook_id: 'wh_y', tenant_id: 'ten_y', due: '2026-11-29T08:00:00.000Z', ready: 1 }], '2026-11-29T08:00:00.000Z')
    fast.wake({ tenantId: 'ten_a', webhookIds: ['wh_1'] })
    await fast.drain()
    assert.equal(store.cycles.length, 0)
    assert.equal(store.announced, 1)
    assert.equal(core.reads.begin(false, false, false), true)
  })

  test('a failed fast claim is announced and the ordinary cycle looks instead', async () => {
    const { store, core, fast } = setup()
    store.fail = new Error('connection lost')
    fast.wake({ tenantId: 'ten_a', webhookIds: ['wh_1'] })
    await fast.drain()
    assert.equal(store.announced, 1)
    assert.equal(core.looks.count, 1)
    assert.equal(core.slots.byWebhook.size, 0, 'its reservation was released')
  })

  test('a wake that names nothing looks at the queue and notes when it came', () => {
    const { core, fast } = setup()
    fast.wake()
    assert.equal(core.looks.count, 1)
    assert.ok(core.reads.plainWakeAt > 0)
  })

  test('stopping: named work is announced, not claimed; leased jobs are given back, not started', async () => {
    const { store, core, started, fast, giveBack } = setup()
    core.stopping = true
    fast.wake({ tenantId: 'ten_a', webhookIds: ['wh_1'] })
    const j = job('ten_a', 'wh_1')
    fast.wake({ tenantId: 'ten_a', webhookIds: ['wh_1'], jobs: [j] })
    giveBack.flush()
    await Promise.all(core.background)
    assert.equal(store.cycles.length, 0)
    assert.deepEqual(started, [])
    assert.deepEqual(store.released, [[j.id]])
    assert.equal(store.announced, 2)
    assert.equal(fast.lease('ten_a'), null)
  })
})
