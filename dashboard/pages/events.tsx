import { useState } from 'preact/hooks'
import { get } from '../api.ts'
import { MAX_ROWS, useEventTail, type TailRow, type TailState } from '../event-tail.ts'
import { navigate, useLocation } from '../router.ts'
import type { EventType } from '../types.ts'
import { Badge, Empty, ErrorBox, Loading, PageHead, useAsync } from '../ui.tsx'

/** The tenant's events as they happen: the latest, then each new one at the top; `?type=` filters both. */
export function Events({ base }: { base: string }) {
  const { query } = useLocation()
  const type = query.get('type') ?? ''
  const [paused, setPaused] = useState(false)
  const tail = useEventTail(base, type, paused)
  const catalog = useAsync(() => get<EventType[]>('/v1/webhooks/event-types'), [])
  const setType = (t: string) => navigate(`${base}/events${t ? `?type=${encodeURIComponent(t)}` : ''}`, true)
  const rows = tail.rows
  const newest = rows?.find((r) => r.fresh)?.event
  return (
    <>
      <PageHead title="Events" sub={<>Everything that happened in this tenant as it happens, newest first, whether or not an endpoint receives it. What each event means: the <a href={`${base}/event-types`}>event catalog</a>.</>} />
      <section class="card tail-bar" aria-label="Events shown">
        <label class="tail-type">Type
          <select value={type} onChange={(e) => setType((e.target as HTMLSelectElement).value)}>
            <option value="">Every event</option>
            {_families(catalog.data ?? []).map(([family, names]) => (
              <optgroup key={family} label={family}>
                <option value={`${family}.*`}>{family}.* (every {family} event)</option>
                {names.map((n) => <option key={n} value={n}>{n}</option>)}
              </optgroup>
            ))}
            {type && !_offered(catalog.data ?? [], type) ? <option value={type}>{type.replaceAll(',', ', ')}</option> : null}
          </select>
        </label>
        <div class="tail-live">
          <TailStatus state={tail.state} />
          <button type="button" class="btn" disabled={tail.state.state === 'stopped'} onClick={() => setPaused((p) => !p)}>{paused ? 'Resume' : 'Pause'}</button>
        </div>
        <p class="hint tail-note">{_note(tail.state)}</p>
      </section>
      <ErrorBox>{tail.state.state === 'stopped' ? tail.state.reason : null}</ErrorBox>
      {/* New events, read out as they come (the table itself is not a live region: a whole page of rows would be read out). */}
      <div class="sr-only" aria-live="polite" aria-atomic="true">
        {newest ? <span key={newest.id}>{`New event: ${newest.event}`}</span> : null}
      </div>
      {rows === undefined ? (tail.state.state === 'stopped' ? null : <Loading />) : <EventTable base={base} rows={rows} type={type} />}
    </>
  )
}

function EventTable({ base, rows, type }: { base: string; rows: TailRow[]; type: string }) {
  if (rows.length === 0) {
    return <Empty title={type ? 'No events of this type yet' : 'No events yet'}>New events appear here the moment they happen: an order, a customer or a payment created through the API.</Empty>
  }
  const open = (e: MouseEvent, id: string) => {
    // The row opens its event; its link (and a selection being made) keeps its own behaviour.
    if ((e.target as Element).closest('a') || getSelection()?.toString()) return
    navigate(`${base}/events/${id}`)
  }
  return (
    <>
      <div class="table-wrap">
        <table class="events">
          <thead><tr><th scope="col">Event</th><th scope="col">Record</th><th scope="col">Time</th></tr></thead>
          <tbody>
            {rows.map(({ event: e, fresh }) => (
              <tr key={e.id} data-event={e.id} class={fresh ? 'opens fresh' : 'opens'} onClick={(ev) => open(ev, e.id)}>
                <td><a href={`${base}/events/${e.id}`} class="mono" title={e.id}>{e.event}</a>{e.test ? <> <Badge label="test" /></> : null}</td>
                <td class="mono record" data-label="Record">{e.data.id}</td>
                <td data-label="Time"><EventTime at={e.timestamp} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="hint">{rows.length === MAX_ROWS ? `The latest ${MAX_ROWS} are kept here; GET /v1/events lists every event kept.` : `${rows.length} shown.`}</p>
    </>
  )
}

/** A time of today as hh:mm:ss, an older one with its date; the whole time in the tooltip. */
function EventTime({ at }: { at: string }) {
  const d = new Date(at)
  const today = d.toDateString() === new Date().toDateString()
  const text = today
    ? d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' })
    : d.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })
  return <time dateTime={at} title={d.toLocaleString()}>{text}</time>
}

const _LABELS: Record<TailState['state'], [string, string]> = {
  connecting: ['Connecting…', 'muted'], live: ['Live', 'ok'], reconnecting: ['Reconnecting…', 'warn'], paused: ['Paused', 'muted'], stopped: ['Stopped', 'bad'],
}

function TailStatus({ state }: { state: TailState }) {
  const [label, tone] = _LABELS[state.state]
  return <span class="tail-status" role="status" data-state={state.state}><span class={`dot dot-${tone}`} aria-hidden="true" />{label}</span>
}

function _note(s: TailState): string {
  switch (s.state) {
    case 'connecting': return 'Opening the stream of new events…'
    case 'live': return 'New events appear at the top as they happen.'
    case 'paused': return 'Paused: the events made meanwhile appear when you resume.'
    case 'reconnecting': return `${s.reason}. Trying again; nothing made meanwhile is missed.`
    case 'stopped': return 'The stream stopped; reload the page to try again.'
  }
}

/** The catalog's names by family (`order` → order.created, …), in its order. */
function _families(catalog: EventType[]): [string, string[]][] {
  const families = new Map<string, string[]>()
  for (const { name } of catalog) {
    const family = name.slice(0, name.indexOf('.'))
    families.set(family, [...(families.get(family) ?? []), name])
  }
  return [...families]
}

const _offered = (catalog: EventType[], type: string) => catalog.some((e) => e.name === type || `${e.name.slice(0, e.name.indexOf('.'))}.*` === type)
