/**
 * An answer too large to build whole: an object whose last field is an array read in windows
 * (a delivery's attempt log, which manual retries can lengthen without end). It goes out as the
 * same JSON text the object would make — `{"data": {...head, [field]: [...items]}}` — one window
 * rendered per event-loop turn, and the next only when the socket has taken the last (srvx reads
 * a web stream's next chunk once Node's response has drained), so neither the time one turn
 * holds the event loop nor the memory an answer takes grows with the array.
 */
export class JsonStream {
  readonly head: Readonly<Record<string, unknown>>
  readonly field: string
  readonly windows: AsyncIterable<readonly unknown[]>

  constructor(head: Readonly<Record<string, unknown>>, field: string, windows: AsyncIterable<readonly unknown[]>) {
    this.head = head
    this.field = field
    this.windows = windows
  }

  /** The body as a stream of UTF-8 chunks: the head, then a window a pull, each after a macrotask. */
  stream(wrap: boolean, onError: (err: unknown) => void): ReadableStream<Uint8Array> {
    return textStream(this.parts(wrap), onError)
  }

  /** The same text in parts: the head, then a window a part, each after a macrotask (what an Idempotency-Key keeps, idempotency.ts). */
  async *parts(wrap: boolean): AsyncGenerator<string, void, undefined> {
    const head = JSON.stringify(this.head)
    let first = true
    yield `${wrap ? '{"data":' : ''}${head === '{}' ? '{' : `${head.slice(0, -1)},`}${JSON.stringify(this.field)}:[`
    const windows = this.windows[Symbol.asyncIterator]()
    try {
      for (;;) {
        // A turn before each window's read, so that other requests run between two.
        await new Promise<void>((resolve) => setImmediate(resolve))
        const next = await windows.next()
        if (next.done) break
        if (next.value.length === 0) continue
        let text = ''
        for (const item of next.value) {
          text += first ? JSON.stringify(item) : `,${JSON.stringify(item)}`
          first = false
        }
        yield text
      }
    } finally {
      await windows.return?.()
    }
    yield wrap ? ']}}' : ']}'
  }
}

/**
 * Text parts as a web stream of UTF-8 chunks, one part a pull (highWaterMark 0: the next is asked
 * for only once the socket has taken the last). A part that fails errors the stream, its status
 * having gone out (the connection is cut), and is reported to `onError`. A client that goes away
 * ends the parts (their `finally` runs), and what a pull in progress then brings is dropped.
 */
export function textStream(parts: AsyncGenerator<string, void, undefined>, onError: (err: unknown) => void): ReadableStream<Uint8Array> {
  // Set when the client goes away, possibly while a pull awaits a part: what that read brings is dropped.
  let cancelled = false
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await parts.next()
        if (cancelled) return
        if (next.done) controller.close()
        else controller.enqueue(Buffer.from(next.value))
      } catch (err) {
        if (cancelled) return
        onError(err)
        controller.error(err)
      }
    },
    async cancel() {
      cancelled = true
      await parts.return(undefined)
    },
  }, { highWaterMark: 0 })
}
