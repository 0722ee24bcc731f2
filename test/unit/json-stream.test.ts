import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { JsonStream } from '../../src/lib/json-stream.ts'

/** Windows that note the event-loop turn each is read in (a setImmediate counter) and whether they were ended. */
function windows(parts: readonly (readonly unknown[])[]) {
  const readAt: number[] = []
  let turn = 0
  let ticking = true
  const tick = () => {
    turn++
    if (ticking) setImmediate(tick)
  }
  setImmediate(tick)
  const seen = { readAt, ended: false, stop: () => { ticking = false } }
  const iterable: AsyncIterable<readonly unknown[]> = {
    [Symbol.asyncIterator]() {
      let i = 0
      return {
        async next() {
          if (i >= parts.length) return { done: true, value: undefined }
          readAt.push(turn)
          return { done: false, value: parts[i++]! }
        },
        async return() {
          seen.ended = true
          return { done: true, value: undefined }
        },
      }
    },
  }
  return { iterable, seen }
}

const unexpected = (err: unknown) => assert.fail(`unexpected stream failure: ${String(err)}`)

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = []
  for await (const c of stream) chunks.push(c)
  return Buffer.concat(chunks).toString('utf8')
}

describe('JsonStream', () => {
  const cases: { head: Record<string, unknown>; parts: unknown[][] }[] = [
    { head: { id: 'del_1', payload: { a: [1, 'é→✓'] }, n: null }, parts: [[{ attempt: 1 }, { attempt: 2 }], [], [{ attempt: 3, error: 'x"y' }]] },
    { head: {}, parts: [[1, 2], [3]] },
    { head: { id: 'del_2' }, parts: [] },
    { head: { id: 'del_3' }, parts: [[], []] },
  ]

  test('renders exactly what JSON.stringify makes of the whole object, in `data` or bare', async () => {
    for (const c of cases) {
      const whole = { ...c.head, log: c.parts.flat() }
      for (const wrap of [true, false]) {
        const expected = JSON.stringify(wrap ? { data: whole } : whole)
        const a = windows(c.parts)
        let text = ''
        for await (const part of new JsonStream(c.head, 'log', a.iterable).parts(wrap)) text += part
        assert.equal(text, expected)
        const b = windows(c.parts)
        assert.equal(await readAll(new JsonStream(c.head, 'log', b.iterable).stream(wrap, unexpected)), expected)
        a.seen.stop()
        b.seen.stop()
      }
    }
  })

  test('reads each window in a turn of the event loop of its own, and only when the reader asks', async () => {
    const parts = Array.from({ length: 6 }, (_, i) => [{ i }])
    const w = windows(parts)
    const reader = new JsonStream({ id: 1 }, 'log', w.iterable).stream(true, unexpected).getReader()
    await reader.read() // the head
    await reader.read() // the first window
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r))
    assert.equal(w.seen.readAt.length, 1, 'no window is read before the reader asks for it')
    while (!(await reader.read()).done);
    w.seen.stop()
    assert.equal(w.seen.readAt.length, parts.length)
    for (let i = 1; i < w.seen.readAt.length; i++) assert.ok(w.seen.readAt[i]! > w.seen.readAt[i - 1]!, `windows read at turns ${w.seen.readAt}`)
  })

  test('a reader that cancels ends the windows', async () => {
    const w = windows([[1], [2], [3]])
    const reader = new JsonStream({ id: 1 }, 'log', w.iterable).stream(true, unexpected).getReader()
    await reader.read()
    await reader.read()
    await reader.cancel()
    w.seen.stop()
    assert.equal(w.seen.ended, true)
    assert.equal(w.seen.readAt.length, 1)
  })

  test('a reader that cancels while a window is being read gets nothing more, and nothing is reported', async () => {
    let release!: () => void
    const failures: unknown[] = []
    let ended = false
    const slow: AsyncIterable<readonly unknown[]> = {
      [Symbol.asyncIterator]() {
        let i = 0
        return {
          async next() {
            if (i++ > 0) await new Promise<void>((r) => (release = r)) // the second window is a slow read
            return { done: false, value: [i] }
          },
          async return() {
            ended = true
            return { done: true, value: undefined }
          },
        }
      },
    }
    const reader = new JsonStream({ id: 1 }, 'log', slow).stream(true, (err) => failures.push(err)).getReader()
    await reader.read() // the head
    await reader.read() // the first window
    const pending = reader.read() // pulls the second, whose read waits
    while (!release) await new Promise((r) => setImmediate(r))
    const cancelled = reader.cancel()
    release()
    await cancelled
    assert.deepEqual(await pending, { done: true, value: undefined })
    assert.deepEqual(failures, [])
    assert.equal(ended, true)
  })

  test('a window that fails errors the stream and is reported once', async () => {
    const failures: unknown[] = []
    const failing: AsyncIterable<readonly unknown[]> = {
      async *[Symbol.asyncIterator]() {
        yield [1]
        throw new Error('database closed')
      },
    }
    const stream = new JsonStream({ id: 1 }, 'log', failing).stream(true, (err) => failures.push(err))
    await assert.rejects(readAll(stream), /database closed/)
    assert.equal(failures.length, 1)
  })
})
