import { useEffect, useRef, useState } from 'preact/hooks'
import { SseParser } from '../src/lib/sse.ts'
import { ApiError, list, messageOf, openStream } from './api.ts'
import type { EventBody } from './types.ts'

// The Events page's live tail: the latest events from GET /v1/events, then every new one from
// GET /v1/events/stream, resumed after the newest listed so nothing falls between the two.

/** What the tail's connection is doing, as the page says it. */
export type TailState =
  | { state: 'connecting' }
  | { state: 'live' }
  | { state: 'reconnecting'; reason: string }
  | { state: 'paused' }
  | { state: 'stopped'; reason: string }

export interface TailRow {
  event: EventBody
  /** Arrived by the stream (the page marks it), not in the first list. */
  fresh: boolean
}

/** Events listed on opening; the rows kept, newest first (older ones drop off the end). */
export const FIRST_PAGE = 50
export const MAX_ROWS = 500

const BACKOFF_MS = [1_000, 2_000, 4_000, 5_000]
/** No byte for this long — the server writes a comment every 15 s — and the connection is taken as lost. */
const SILENCE_MS = 40_000
/** Before the first id any tenant has: resumes from the start when nothing was listed. */
const BEFORE_ALL = 'evt_00000000-0000-7000-8000-000000000000'

/**
 * The tail of the tenant's events of `type` (names and families, comma-separated; '' for every
 * event): rows newest first, and the connection's state. `paused` closes the stream, which frees
 * one of the five a session may hold; resuming picks up after the newest row. Leaving the page
 * (the tenant or type changing too) aborts it.
 */
export function useEventTail(tenant: string, type: string, paused: boolean): { rows: TailRow[] | undefined; state: TailState } {
  const [rows, setRows] = useState<TailRow[] | undefined>(undefined)
  const [state, setState] = useState<TailState>({ state: 'connecting' })
  const listed = useRef<{ key: string; listed: Set<string>; newest: string } | null>(null)
  useEffect(() => {
    const ac = new AbortController()
    const key = `${tenant} ${type}`
    void (async () => {
      if (listed.current?.key !== key) {
        listed.current = null
        setRows(undefined)
        setState({ state: 'connecting' })
        let first: Awaited<ReturnType<typeof _firstPage>>
        try {
          first = await _firstPage(type)
        } catch (err) {
          if (!ac.signal.aborted) setState({ state: 'stopped', reason: messageOf(err) })
          return
        }
        if (ac.signal.aborted) return
        listed.current = { key, listed: new Set(first.rows.map((r) => r.event.id)), newest: first.newest }
        setRows(first.rows)
      }
      if (paused) return setState({ state: 'paused' })
      const at = listed.current!
      await followEvents({
        type, after: at.newest, signal: ac.signal, onState: setState,
        onEvents: (events) => {
          // Only the first page can repeat: the stream resumes exactly after what it sent.
          const fresh = events.filter((e) => !at.listed.has(e.id))
          at.newest = events[events.length - 1]!.id
          if (fresh.length) setRows((r) => [...fresh.reverse().map((event) => ({ event, fresh: true })), ...(r ?? [])].slice(0, MAX_ROWS))
        },
      })
    })()
    return () => ac.abort()
  }, [tenant, type, paused])
  return { rows, state }
}

/** The newest events, and where the stream resumes: after the newest listed, else after the tenant's newest of any type. */
async function _firstPage(type: string): Promise<{ rows: TailRow[]; newest: string }> {
  const page = await list<EventBody>('/v1/events', { limit: String(FIRST_PAGE), type })
  const rows = page.data.map((event) => ({ event, fresh: false }))
  if (page.data[0]) return { rows, newest: page.data[0].id }
  // Nothing of this type: resume after the tenant's newest event, so the stream never reads its whole history.
  const head = type ? (await list<EventBody>('/v1/events', { limit: '1' })).data[0] : undefined
  return { rows, newest: head?.id ?? BEFORE_ALL }
}

/**
 * Follows GET /v1/events/stream after `after` until `signal` aborts: each chunk's envelopes to
 * `onEvents` in the stream's order, the connection's state to `onState`. A dropped connection
 * (an error, the server ending it, 40 s without a byte) is resumed with Last-Event-ID after
 * 1–5 s; an answer another try would not change (400, 401, 403, 404) stops it.
 */
export async function followEvents(o: {
  type: string; after: string | null; signal: AbortSignal; onEvents(events: EventBody[]): void; onState(s: TailState): void
}): Promise<void> {
  let last = o.after
  let failures = 0
  for (let first = true; !o.signal.aborted; first = false) {
    if (first) o.onState({ state: 'connecting' })
    const conn = new AbortController()
    const abort = () => conn.abort()
    o.signal.addEventListener('abort', abort)
    let timer: ReturnType<typeof setTimeout> | undefined
    let silent = false
    const heard = () => {
      clearTimeout(timer)
      timer = setTimeout(() => {
        silent = true
        conn.abort()
      }, SILENCE_MS)
    }
    let reason = 'The server closed the stream'
    try {
      heard()
      const body = await openStream('/v1/events/stream', {
        query: { type: o.type || undefined, after: first ? last ?? undefined : undefined }, lastEventId: first ? undefined : last ?? undefined, signal: conn.signal,
      })
      failures = 0
      o.onState({ state: 'live' })
      const parser = new SseParser()
      const reader = body.getReader()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        heard()
        const messages = parser.push(value)
        if (messages.length === 0) continue
        last = parser.lastEventId
        o.onEvents(messages.map((m) => JSON.parse(m.data) as EventBody))
      }
    } catch (err) {
      if (o.signal.aborted) return
      if (err instanceof ApiError && [400, 401, 403, 404].includes(err.status)) return o.onState({ state: 'stopped', reason: messageOf(err) })
      reason = silent ? 'Nothing heard from the server for 40 s'
        : err instanceof ApiError && err.status === 429 ? 'This session already follows events in 5 other tabs or windows; close one'
        : messageOf(err)
    } finally {
      clearTimeout(timer)
      o.signal.removeEventListener('abort', abort)
    }
    if (o.signal.aborted) return
    o.onState({ state: 'reconnecting', reason })
    await _sleep(BACKOFF_MS[Math.min(failures++, BACKOFF_MS.length - 1)]!, o.signal)
  }
}

function _sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
    function done() {
      clearTimeout(t)
      signal.removeEventListener('abort', done)
      resolve()
    }
  })
}
