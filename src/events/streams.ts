import type { Engine, EventFeed, FeedEvent } from '../engine/port.ts'
import { TooManyError } from '../lib/errors.ts'
import type { Logger } from '../lib/logger.ts'

/**
 * The event streams of one `serve` (GET /v1/events/stream, CONTRACT §15). One reader per process
 * follows the engine's feed (EventFeed, engine/port.ts) for every tenant with a stream open, woken
 * by commits (this process's at once, others' by the engine's word of them) and every second as
 * a backstop, and hands each event to the streams of its tenant. A stream that resumes first
 * reads what it missed from the feed itself, its tenant's events only, paced by its consumer;
 * the events the reader brings meanwhile wait for it, then it is live.
 *
 * Memory: what a stream holds is bounded by `bufferBytes` — past it (a consumer that reads
 * nothing, once the sockets' buffers are full) the stream is cut, and the consumer resumes with
 * Last-Event-ID. docs/decisions/0064-event-stream.md has the choices.
 */
export interface StreamLimits {
  /** Streams one API key may hold open at once in this process. */
  perKey: number
  /** Bytes a stream may hold that its consumer has not taken: past them it is closed. */
  bufferBytes: number
  /** A comment line this often keeps proxies from closing an idle stream. */
  heartbeatMs: number
  /** The reader looks for new events this often even when no commit was heard of. */
  pollMs: number
}

export const STREAM_LIMITS: StreamLimits = { perKey: 5, bufferBytes: 1024 * 1024, heartbeatMs: 15_000, pollMs: 1_000 }

/**
 * Events one read of the feed takes: their payloads are held at once (an order's event can be
 * ~30 KB, so 100 is ~3 MB; 500 held 15 MB per read on PostgreSQL, whose reads come in batches).
 */
const PAGE = 100
/** Events that may wait for a stream still catching up. */
const PENDING_MAX = 10_000

export interface OpenStream {
  tenantId: string
  /** The API key (or the key behind a dashboard session) the stream counts against. */
  keyId: string
  /** The id of the last event the consumer saw (Last-Event-ID, `?after=`); null: from now on. */
  after: string | null
  /** Which event names it wants (the `type` filter). */
  wants: (name: string) => boolean
}

export interface StreamStats {
  open: number
  /** Events written to streams, since start. */
  sent: number
  /** Streams closed because their consumer read too slowly, since start. */
  cutSlow: number
}

interface _Stream {
  tenantId: string
  keyId: string
  wants: (name: string) => boolean
  /** The feed position of the last event handed to it (sent or filtered out). */
  position: string
  /** Events the reader brought while it caught up; null once live. */
  pending: FeedEvent[] | null
  controller: ReadableStreamDefaultController<Uint8Array>
  /** Resolves when its consumer wants more (ReadableStream's pull). */
  wanted: (() => void) | undefined
  done: boolean
  /** Gives back its place under the key's limit. */
  release: () => void
}

const _encoder = new TextEncoder()
const _HEARTBEAT = _encoder.encode(': keep-alive\n\n')
const _OPENED = _encoder.encode(': travelops event stream\n\n')

export class EventStreams {
  readonly #feed: EventFeed
  readonly #logger: Logger
  readonly #limits: StreamLimits
  readonly #streams = new Set<_Stream>()
  readonly #perKey = new Map<string, number>()
  #stats: StreamStats = { open: 0, sent: 0, cutSlow: 0 }
  /** The reader's position in the feed; undefined while no stream is open. */
  #cursor: string | undefined
  #starting: Promise<void> | undefined
  #stopWatching: (() => Promise<void>) | undefined
  #timers: NodeJS.Timeout[] = []
  #reading = false
  #again = false
  #closed = false

  constructor(feed: EventFeed, logger: Logger, limits: StreamLimits = STREAM_LIMITS) {
    this.#feed = feed
    this.#logger = logger
    this.#limits = limits
  }

  stats(): StreamStats {
    return { ...this.#stats, open: this.#streams.size }
  }

  /**
   * A new stream: its body, as Server-Sent Events. Throws TooManyError past the key's limit.
   * Resolves once the stream is registered (the events it missed follow as its consumer reads).
   */
  async open(o: OpenStream): Promise<ReadableStream<Uint8Array>> {
    if (this.#closed) throw new TooManyError('serve is stopping; open the stream again in a moment', 1)
    const held = this.#perKey.get(o.keyId) ?? 0
    if (held >= this.#limits.perKey) {
      throw new TooManyError(`This API key already has ${held} event streams open (at most ${this.#limits.perKey}); close one first`, 5)
    }
    this.#perKey.set(o.keyId, held + 1)
    const release = () => {
      const n = (this.#perKey.get(o.keyId) ?? 1) - 1
      if (n === 0) this.#perKey.delete(o.keyId)
      else this.#perKey.set(o.keyId, n)
    }
    let position: string
    try {
      await this.#start()
      position = o.after === null ? await this.#feed.head() : await this.#feed.resumeAfter(o.tenantId, o.after)
    } catch (err) {
      release()
      await this.#stopIfIdle()
      throw err
    }
    let s!: _Stream
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        s = { tenantId: o.tenantId, keyId: o.keyId, wants: o.wants, position, pending: [], controller, wanted: undefined, done: false, release }
        controller.enqueue(_OPENED)
      },
      pull: () => {
        const w = s.wanted
        s.wanted = undefined
        w?.()
      },
      cancel: () => this.#end(s),
    }, new ByteLengthQueuingStrategy({ highWaterMark: this.#limits.bufferBytes }))
    this.#streams.add(s)
    void this.#catchUp(s)
    return body
  }

  /** Ends every stream cleanly (SIGTERM) and stops following the feed. */
  async close(): Promise<void> {
    this.#closed = true
    for (const s of [...this.#streams]) {
      this.#end(s)
      try {
        s.controller.close()
      } catch { /* already errored */ }
    }
    await this.#stopIfIdle()
  }

  #end(s: _Stream): void {
    if (s.done) return
    s.done = true
    this.#streams.delete(s)
    s.release()
    s.wanted?.()
    void this.#stopIfIdle()
  }

  async #start(): Promise<void> {
    this.#starting ??= (async () => {
      this.#cursor = await this.#feed.head()
      this.#stopWatching = await this.#feed.watch(() => void this.#read())
      this.#timers = [
        setInterval(() => void this.#read(), this.#limits.pollMs),
        setInterval(() => this.#heartbeat(), this.#limits.heartbeatMs),
      ]
      for (const t of this.#timers) t.unref()
    })()
    try {
      await this.#starting
    } catch (err) {
      this.#starting = undefined
      throw err
    }
  }

  async #stopIfIdle(): Promise<void> {
    if (this.#streams.size > 0 || !this.#starting) return
    const starting = this.#starting
    this.#starting = undefined
    await starting.catch(() => {})
    if (this.#streams.size > 0) {
      this.#starting = starting // a stream opened meanwhile: keep following
      return
    }
    for (const t of this.#timers) clearInterval(t)
    this.#timers = []
    this.#cursor = undefined
    const stop = this.#stopWatching
    this.#stopWatching = undefined
    await stop?.()
  }

  /** The events committed since the reader's position, for every tenant with a stream, handed to their streams. */
  async #read(): Promise<void> {
    if (this.#reading) {
      this.#again = true
      return
    }
    this.#reading = true
    try {
      do {
        this.#again = false
        for (;;) {
          const cursor = this.#cursor
          const tenants = [...new Set([...this.#streams].map((s) => s.tenantId))]
          if (cursor === undefined || tenants.length === 0) return
          const rows = await this.#feed.after(tenants, cursor, PAGE)
          if (this.#cursor !== cursor) break // stopped and started again meanwhile
          for (const e of rows) this.#dispatch(e)
          if (rows.length > 0) this.#cursor = rows[rows.length - 1]!.position
          if (rows.length < PAGE) break
        }
      } while (this.#again)
    } catch (err) {
      // The next commit heard of, or the poll, reads again.
      this.#logger.warn('event streams: reading the feed failed', { error: String(err) })
    } finally {
      this.#reading = false
    }
  }

  #dispatch(e: FeedEvent): void {
    for (const s of this.#streams) {
      if (s.tenantId !== e.tenantId) continue
      if (s.pending) {
        s.pending.push(e)
        if (s.pending.length > PENDING_MAX) this.#cut(s)
      } else this.#send(s, e)
    }
  }

  /** Hands a live event to the stream, once and in order; a stream past its buffer is cut. */
  #send(s: _Stream, e: FeedEvent): void {
    this.#write(s, e)
    if (!s.done && (s.controller.desiredSize ?? 0) < 0) this.#cut(s)
  }

  #write(s: _Stream, e: FeedEvent): void {
    if (s.done || e.position <= s.position) return
    s.position = e.position
    if (!s.wants(e.name)) return
    s.controller.enqueue(_encoder.encode(`id: ${e.id}\nevent: ${e.name}\ndata: ${e.payload}\n\n`))
    this.#stats.sent++
  }

  /** A consumer too slow for its buffer: its stream is closed; it resumes with Last-Event-ID. */
  #cut(s: _Stream): void {
    if (s.done) return
    this.#stats.cutSlow++
    this.#end(s)
    s.controller.error(new Error('event stream closed: its consumer read too slowly'))
  }

  /**
   * What the stream missed, read from the feed, then the events that waited for it, each written
   * when its consumer has room (never cut for it: it is paced); then it is live.
   */
  async #catchUp(s: _Stream): Promise<void> {
    const paced = async (events: FeedEvent[]): Promise<boolean> => {
      for (const e of events) {
        while (!s.done && (s.controller.desiredSize ?? 0) <= 0) await new Promise<void>((r) => { s.wanted = r })
        if (s.done) return false
        this.#write(s, e)
      }
      return true
    }
    try {
      for (;;) {
        const rows = await this.#feed.after([s.tenantId], s.position, PAGE)
        if (!(await paced(rows))) return
        if (rows.length < PAGE) break
      }
      while (s.pending!.length > 0) {
        const waited = s.pending!
        s.pending = []
        if (!(await paced(waited))) return
      }
      s.pending = null
    } catch (err) {
      this.#logger.warn('event streams: catching a stream up failed', { error: String(err) })
      this.#end(s)
      try {
        s.controller.error(err)
      } catch { /* already ended */ }
    }
  }

  #heartbeat(): void {
    for (const s of this.#streams) {
      // A consumer that has not taken what is queued needs no keep-alive.
      if (!s.done && (s.controller.desiredSize ?? 0) > 0) s.controller.enqueue(_HEARTBEAT)
    }
  }
}

const _hubs = new WeakMap<Engine, EventStreams>()

/** The event streams of the serve on `engine` (one per engine object), made on first use. */
export function streamsOf(engine: Engine, logger: Logger, limits?: StreamLimits): EventStreams {
  let hub = _hubs.get(engine)
  if (!hub) _hubs.set(engine, (hub = new EventStreams(engine.feed, logger, limits)))
  return hub
}

/** The event streams of `engine`, when any were ever opened. */
export function existingStreams(engine: Engine): EventStreams | undefined {
  return _hubs.get(engine)
}
