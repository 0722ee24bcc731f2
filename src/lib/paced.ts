/** How long a slice of work in memory may run before the event loop gets a turn. */
export const SLICE_MS = 5

/**
 * Calls `each` for every item in order, giving the event loop a turn (setImmediate) whenever
 * SLICE_MS of it has run since the last: work over millions of items, which would hold every
 * other request for as long as it takes, holds them a slice at a time. The clock (`now`) is read
 * after every `step` items: 1 where an item can take milliseconds, more where each is cheap.
 */
export async function paced<T>(items: Iterable<T>, each: (item: T) => void,
  o: { step?: number; now?: () => number } = {}): Promise<void> {
  const { step = 1, now = performance.now.bind(performance) } = o
  let start = now()
  let i = 0
  for (const item of items) {
    each(item)
    if (++i % step === 0 && now() - start >= SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      start = now()
    }
  }
}
