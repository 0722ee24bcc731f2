import { SseParser, type SseMessage } from '../../src/lib/sse.ts'

// A client of GET /v1/events/stream for the tests, over real HTTP: the messages as they come,
// each awaited by next(); the stream's end (cut, or ended by serve) as `ended`.

export interface SseClient {
  status: number
  headers: Headers
  /** Every message so far, in order. */
  messages: SseMessage[]
  /** The next message not yet taken by next(); rejects when the stream ends first or after `timeoutMs`. */
  next(timeoutMs?: number): Promise<SseMessage>
  /** Comment lines seen (`: keep-alive`). */
  comments(): number
  /** Resolves when the stream ends: `done` (the server ended it) or `error` (cut). */
  ended: Promise<'done' | 'error'>
  close(): Promise<void>
}

export async function openStream(url: string, key: string, opts: { lastEventId?: string; query?: string } = {}): Promise<SseClient> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'text/event-stream' }
  if (opts.lastEventId !== undefined) headers['last-event-id'] = opts.lastEventId
  const controller = new AbortController()
  const res = await fetch(`${url}/v1/events/stream${opts.query ? `?${opts.query}` : ''}`, { headers, signal: controller.signal })
  const messages: SseMessage[] = []
  let taken = 0
  let comments = 0
  let wake: (() => void) | undefined
  let finished: 'done' | 'error' | undefined
  const parser = new SseParser()
  const decoder = new TextDecoder()
  const ended = (async (): Promise<'done' | 'error'> => {
    if (!res.body) return 'done'
    try {
      for await (const chunk of res.body) {
        const text = decoder.decode(chunk as Uint8Array, { stream: true })
        comments += (text.match(/^: keep-alive$/gm) ?? []).length
        messages.push(...parser.push(text))
        wake?.()
      }
      return (finished = 'done')
    } catch {
      return (finished = 'error')
    } finally {
      wake?.()
    }
  })()
  return {
    status: res.status,
    headers: res.headers,
    messages,
    comments: () => comments,
    ended,
    next: async (timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs
      while (taken >= messages.length) {
        if (finished) throw new Error(`the stream ended (${finished}) after ${messages.length} messages`)
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`no message within ${timeoutMs} ms (${messages.length} so far)`)
        await new Promise<void>((r) => {
          const t = setTimeout(r, left)
          wake = () => { clearTimeout(t); r() }
        })
      }
      return messages[taken++]!
    },
    close: async () => {
      controller.abort()
      await ended
    },
  }
}
