/**
 * Server-Sent Events as the HTML standard reads them (§9.2.6, "Interpreting an event stream"),
 * for clients of GET /v1/events/stream: `travelops listen` and the tests. Lines end in LF, CR or
 * CRLF; `data` lines join with LF; a comment (`:`) or an unknown field is ignored; a blank line
 * ends a message, which is dispatched only when it has data. An `id` becomes the last event id
 * when its message ends (a stream cut inside a message leaves it as it was), and persists from
 * message to message, as EventSource keeps it.
 */
export interface SseMessage {
  /** The last event id seen (this message's, or an earlier one's). */
  id: string
  /** `message` when the stream named none. */
  event: string
  data: string
}

export class SseParser {
  #buffer = ''
  #lastId = ''
  #idBuffer = ''
  #event = ''
  #data: string[] = []
  #hasData = false
  /** The reconnection time the stream asked for (`retry:`), in ms. */
  retryMs: number | undefined
  readonly #decoder = new TextDecoder()

  /** The last event id, as a resumed request sends it in Last-Event-ID. */
  get lastEventId(): string {
    return this.#lastId
  }

  /** Feeds bytes; returns the messages they complete. */
  push(chunk: Uint8Array | string): SseMessage[] {
    this.#buffer += typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true })
    const out: SseMessage[] = []
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.#buffer)
      // A lone CR at the end may be the first half of CRLF: wait for the next byte.
      if (!m || (m[0] === '\r' && m.index === this.#buffer.length - 1)) break
      const line = this.#buffer.slice(0, m.index)
      this.#buffer = this.#buffer.slice(m.index + m[0].length)
      const done = this.#line(line)
      if (done) out.push(done)
    }
    return out
  }

  #line(line: string): SseMessage | undefined {
    if (line === '') {
      this.#lastId = this.#idBuffer
      const msg = this.#hasData ? { id: this.#lastId, event: this.#event || 'message', data: this.#data.join('\n') } : undefined
      this.#event = ''
      this.#data = []
      this.#hasData = false
      return msg
    }
    if (line.startsWith(':')) return undefined
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'data') {
      this.#data.push(value)
      this.#hasData = true
    } else if (field === 'event') this.#event = value
    else if (field === 'id') {
      if (!value.includes('\0')) this.#idBuffer = value
    } else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value)
    return undefined
  }
}
