import { useState } from 'preact/hooks'
import { get, list } from '../api.ts'
import type { Delivery, EventBody, Page, Webhook } from '../types.ts'
import { Badge, Empty, ErrorBox, formatTime, Json, Loading, PageHead, Time, useAsync, useRefresh, useSubmit } from '../ui.tsx'

const DELIVERIES_PAGE = 100

/** One event: its envelope, and the deliveries it made (GET /v1/webhooks/deliveries?event_id=…), each opening its delivery page. */
export function EventPage({ base, id }: { base: string; id: string }) {
  const ev = useAsync(() => get<EventBody>(`/v1/events/${id}`), [id])
  const webhooks = useAsync(() => list<Webhook>('/v1/webhooks', { limit: '100' }), [base])
  const first = useAsync(() => list<Delivery>('/v1/webhooks/deliveries', { event_id: id, limit: String(DELIVERIES_PAGE) }), [id])
  // Older pages, once asked for (an event of a tenant with more than a page of subscriptions).
  const [older, setOlder] = useState<{ id: string; rows: Delivery[]; next: string | null } | null>(null)
  const more = older?.id === id ? older : null
  const next = more ? more.next : first.data?.has_more ? first.data.next_cursor : null
  const loadMore = useSubmit(async () => {
    const page: Page<Delivery> = await list<Delivery>('/v1/webhooks/deliveries', { event_id: id, limit: String(DELIVERIES_PAGE), cursor: next ?? undefined })
    setOlder({ id, rows: [...(more?.rows ?? []), ...page.data], next: page.has_more ? page.next_cursor : null })
  })
  const rows = first.data ? [...first.data.data, ...(more?.rows ?? [])] : undefined
  useRefresh(first, rows?.some((d) => d.status === 'pending') ? 2000 : null)
  if (!ev.data) return ev.error ? <><PageHead title="Event" sub={<span class="mono">{id}</span>} /><ErrorBox>{ev.error}</ErrorBox></> : <Loading />
  const e = ev.data
  return (
    <>
      <PageHead title={e.event} sub={<span class="mono">{e.id}</span>}>
        {e.test ? <Badge label="test" /> : null}
        <a class="btn" href={`${base}/events`}>All events</a>
      </PageHead>
      <section class="card">
        <dl class="facts">
          <dt>Happened</dt><dd>{formatTime(e.timestamp)}</dd>
          <dt>Record</dt><dd class="mono">{e.data.id}</dd>
          <dt>Sent to</dt><dd>{rows ? `${rows.length}${next ? '+' : ''} endpoint${rows.length === 1 ? '' : 's'}` : '…'}</dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="made">
        <h2 id="made">Deliveries</h2>
        <ErrorBox>{first.error ?? webhooks.error ?? loadMore.error}</ErrorBox>
        {rows ? <MadeTable base={base} rows={rows} webhooks={webhooks.data?.data ?? []} /> : first.error ? null : <Loading />}
        {next ? <div class="pager"><button type="button" class="btn" disabled={loadMore.busy} onClick={() => loadMore.run()}>More deliveries</button></div> : null}
      </section>
      <section class="card">
        <h2>Envelope</h2>
        <p class="hint">The body each endpoint was sent, and what GET /v1/events/{'{id}'} answers.</p>
        <Json value={e} label="Envelope" />
      </section>
    </>
  )
}

/** The deliveries of one event: the endpoint first (it is what tells them apart), each linking to its delivery. */
function MadeTable({ base, rows, webhooks }: { base: string; rows: Delivery[]; webhooks: Webhook[] }) {
  if (rows.length === 0) {
    return <Empty title="Sent to no endpoint">No endpoint of this tenant asked for this event when it happened. An endpoint added later does not receive earlier events.</Empty>
  }
  const urls = new Map(webhooks.map((h) => [h.id, h.url]))
  return (
    <div class="table-wrap">
      <table>
        <thead><tr><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Response</th><th scope="col">Last attempt</th></tr></thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.id} data-delivery={d.id}>
              <td class="url"><a class="mono" href={`${base}/deliveries/${d.id}`} title="Open this delivery">{urls.get(d.webhook_id) ?? d.webhook_id}</a></td>
              <td data-label="Status"><Badge label={d.status} /></td>
              <td class="num" data-label="Attempts">{d.attempts}</td>
              <td class="num" data-label="Response">{d.response_code ?? '—'}</td>
              <td data-label="Last attempt"><Time at={d.last_attempt_at} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
