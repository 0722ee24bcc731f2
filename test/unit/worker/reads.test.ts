import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createReads } from '../../../src/delivery/worker/reads.ts'

// When the worker reads the queue and when it announces work (src/delivery/worker/reads.ts),
// with a clock the test moves (node:test's mock timers): no sleeping, no real timer.

function reads() {
  const seen = { looks: 0, announced: 0 }
  return { seen, r: createReads(() => void seen.looks++, () => void seen.announced++) }
}

describe('reads', () => {
  test('the first cycle reads; then a cycle of successes only records, until a read is asked for', () => {
    const { r } = reads()
    assert.equal(r.begin(false, false, false), true, 'at start')
    assert.equal(r.begin(false, false, false), false, 'only successes, nothing asked')
    r.whenFree()
    assert.equal(r.begin(false, false, false), true, 'a slot freed with work waiting')
    assert.equal(r.begin(false, true, false), true, 'a failure may have queued its retry')
    assert.equal(r.begin(true, false, false), true, 'a manual attempt may have queued work again')
    r.heard()
    assert.equal(r.begin(false, false, true), false, 'never once stopping')
    assert.equal(r.begin(false, false, false), true, 'the read asked for before stopping is still owed')
  })

  test('what a read of its own leaves is announced; a read that answers an announcement announces nothing back', () => {
    const { r, seen } = reads()
    r.begin(false, false, false) // at start: this process asked
    r.left()
    assert.equal(seen.announced, 1)
    r.heard()
    assert.equal(r.begin(false, false, false), true)
    r.left()
    assert.equal(seen.announced, 1, 'the process that announced it knows it is there')
    // ...but left work is read again, and a failure's read announces what it leaves.
    assert.equal(r.begin(false, true, false), true)
    r.left()
    assert.equal(seen.announced, 2)
  })

  test('a failed read is read again, announcing as it would have', () => {
    const { r, seen } = reads()
    r.begin(false, false, false) // the read at start
    r.heard()
    assert.equal(r.begin(false, false, false), true)
    r.unread()
    assert.equal(r.begin(false, false, false), true)
    r.left()
    assert.equal(seen.announced, 0, 'still an answer to an announcement')
    r.whenFree()
    r.begin(false, false, false)
    r.unread()
    r.begin(false, false, false)
    r.left()
    assert.equal(seen.announced, 1)
  })

  test('a plain wake is noted with the time it came', () => {
    const { r } = reads()
    assert.equal(r.plainWakeAt, -1)
    const before = performance.now()
    r.plainWake()
    assert.ok(r.plainWakeAt >= before)
  })

  test('next(ms) looks once after ms, a later next() replacing it; cancel() ends every look', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] })
    const { r, seen } = reads()
    r.next(1000)
    t.mock.timers.tick(999)
    assert.equal(seen.looks, 0)
    r.next(50) // a due time sooner than the poll
    t.mock.timers.tick(50)
    assert.equal(seen.looks, 1)
    t.mock.timers.tick(5000)
    assert.equal(seen.looks, 1, 'the replaced timer never fires')
    r.next(10)
    r.cancel()
    r.next(10)
    t.mock.timers.tick(100)
    assert.equal(seen.looks, 1)
  })

  test('lookAt() keeps the earliest pause end; a later one does not move it', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] })
    const { r, seen } = reads()
    r.lookAt(1100, 1000) // 100 ms from now
    r.lookAt(1500, 1000) // later: the earlier stands
    t.mock.timers.tick(99)
    assert.equal(seen.looks, 0)
    t.mock.timers.tick(1)
    assert.equal(seen.looks, 1)
    t.mock.timers.tick(1000)
    assert.equal(seen.looks, 1)
    r.lookAt(2000, 1000)
    r.lookAt(1010, 1000) // earlier: replaces it
    t.mock.timers.tick(10)
    assert.equal(seen.looks, 2)
    t.mock.timers.tick(2000)
    assert.equal(seen.looks, 2)
  })
})
