import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { paced, SLICE_MS } from '../../src/lib/paced.ts'

// Work in memory over many items (a stats answer's millions of (day, duration) sums) gives the
// event loop a turn whenever SLICE_MS of it has run. The clock is the test's: each item costs
// what the test says, and a setImmediate of the test's own notes when a turn came.

async function run(costs: number[], step?: number) {
  let clock = 0
  let turned = false
  const seen: { item: number; turned: boolean }[] = []
  await paced(costs.keys(), (i) => {
    seen.push({ item: i, turned })
    turned = false
    setImmediate(() => (turned = true))
    clock += costs[i]!
  }, { step, now: () => clock })
  return seen
}

describe('paced', () => {
  it('calls each item once, in order; work under a slice takes no turn', async () => {
    const seen = await run(Array(40).fill((SLICE_MS - 0.5) / 40))
    assert.deepEqual(seen.map((s) => s.item), [...Array(40).keys()])
    assert.ok(seen.every((s) => !s.turned), 'no turn')
  })

  it('a turn of the event loop as soon as a slice of work has run, and only then', async () => {
    // 1 ms an item: a turn before items 5, 10, 15…
    const seen = await run(Array(23).fill(1))
    assert.deepEqual(seen.filter((s) => s.turned).map((s) => s.item), [5, 10, 15, 20])
  })

  it('reads the clock every `step` items: a turn at the first multiple of it after a slice', async () => {
    const seen = await run(Array(300).fill(0.5), 64)
    assert.deepEqual(seen.filter((s) => s.turned).map((s) => s.item), [64, 128, 192, 256])
  })

  it('an item that costs more than a slice is followed by a turn', async () => {
    const seen = await run([0, 40, 0, 0, 40, 0])
    assert.deepEqual(seen.filter((s) => s.turned).map((s) => s.item), [2, 5])
  })
})
