import { useState } from 'preact/hooks'
import { get, list, post } from '../api.ts'
import { navigate, useLocation } from '../router.ts'
import type { Delivery, DeliveryDetail, EventType, Webhook } from '../types.ts'
import { Badge, Empty, ErrorBox, formatTime, Json, Loading, Notice, PageHead, Time, useAsync, useRefresh, useSubmit } from '../ui.tsx'

const REFRESH_MS = 3000

/** Deliveries as a table (cards at phone width); `endpoint: false` leaves out the endpoint column, for one endpoint's own page. */
export function DeliveryTable({ base, rows, webhooks, more, endpoint = true }: { base: string; rows: Delivery[]; webhooks: Webhook[]; more?: boolean; endpoint?: boolean }) {
  const urls = new Map(webhooks.map((h) => [h.id, h.url]))
  if (rows.length === 0 && more) {
    // A filtered page stops after looking at 100,000 deliveries (docs/decisions/0003-filtered-page-budget.md): older ones may still match.
    return <Empty title="None among the deliveries looked at">A filtered page looks at up to 100,000 deliveries; press Older to look further back.</Empty>
  }
  if (rows.length === 0) return <Empty title="No deliveries match">Deliveries appear here as soon as an event is sent to an endpoint.</Empty>
  return (
    <div class="table-wrap">
      <table class="deliveries">
        <thead><tr><th scope="col">Event</th>{endpoint ? <th scope="col">Endpoint</th> : null}<th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Response</th><th scope="col">Created</th></tr></thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.id} data-delivery={d.id}>
              <td><a href={`${base}/deliveries/${d.id}`} class="mono">{d.event}</a>{(d.payload as { test?: boolean }).test ? <> <Badge label="test" /></> : null}</td>
              {endpoint ? <td class="mono url" data-label="Endpoint">{urls.get(d.webhook_id) ?? d.webhook_id}</td> : null}
              <td data-label="Status"><Badge label={d.status} /></td>
              <td class="num" data-label="Attempts">{d.attempts}</td>
              <td class="num" data-label="Response">{d.response_code ?? '—'}</td>
              <td data-label="Created"><Time at={d.created_at} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

export function Deliveries({ base }: { base: string }) {
  const { query } = useLocation()
  const filters = {
    status: query.get('status') ?? '', event: query.get('event') ?? '', webhook_id: query.get('webhook_id') ?? '', since: query.get('since') ?? '',
  }
  const key = JSON.stringify(filters)
  const [cursors, setCursors] = useState<{ key: string; stack: string[] }>({ key, stack: [] })
  const stack = cursors.key === key ? cursors.stack : []
  const cursor = stack[stack.length - 1]
  const [live, setLive] = useState(true)
  const webhooks = useAsync(() => list<Webhook>('/v1/webhooks', { limit: '100' }), [base])
  const catalog = useAsync(() => get<EventType[]>('/v1/webhooks/event-types'), [])
  const page = useAsync(() => list<Delivery>('/v1/webhooks/deliveries', {
    limit: '25', cursor, status: filters.status, event: filters.event, webhook_id: filters.webhook_id,
    created_after: filters.since ? new Date(filters.since).toISOString() : undefined,
  }), [key, cursor])
  useRefresh(page, live && !cursor ? REFRESH_MS : null)
  const setFilter = (name: string, value: string) => {
    const q = new URLSearchParams(location.search)
    if (value) q.set(name, value)
    else q.delete(name)
    const s = q.toString()
    navigate(`${base}/deliveries${s ? `?${s}` : ''}`, true)
  }
  return (
    <>
      <PageHead title="Deliveries" sub="Every event sent to this tenant's endpoints, newest first, with its payload and attempts.">
        <label class="check"><input type="checkbox" checked={live} onChange={(e) => setLive((e.target as HTMLInputElement).checked)} /> Refresh every 3 s</label>
      </PageHead>
      <form class="filters card" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <label>Status
          <select value={filters.status} onChange={(e) => setFilter('status', (e.target as HTMLSelectElement).value)}>
            <option value="">Any</option><option value="pending">Pending</option><option value="delivered">Delivered</option><option value="failed">Failed</option>
          </select>
        </label>
        <label>Event
          <select value={filters.event} onChange={(e) => setFilter('event', (e.target as HTMLSelectElement).value)}>
            <option value="">Any</option>
            {(catalog.data ?? []).map((c) => <option key={c.name} value={c.name}>{c.name}</option>)}
          </select>
        </label>
        <label>Endpoint
          <select value={filters.webhook_id} onChange={(e) => setFilter('webhook_id', (e.target as HTMLSelectElement).value)}>
            <option value="">Any</option>
            {(webhooks.data?.data ?? []).map((h) => <option key={h.id} value={h.id}>{h.url}</option>)}
          </select>
        </label>
        <label>Since
          <input type="datetime-local" value={filters.since} onChange={(e) => setFilter('since', (e.target as HTMLInputElement).value)} />
        </label>
      </form>
      <ErrorBox>{page.error ?? webhooks.error}</ErrorBox>
      {page.data ? <DeliveryTable base={base} rows={page.data.data} webhooks={webhooks.data?.data ?? []} more={page.data.has_more} /> : page.error ? null : <Loading />}
      <div class="pager">
        <button type="button" class="btn" disabled={stack.length === 0} onClick={() => setCursors({ key, stack: stack.slice(0, -1) })}>Newer</button>
        <button type="button" class="btn" disabled={!page.data?.has_more} onClick={() => setCursors({ key, stack: [...stack, page.data!.next_cursor!] })}>Older</button>
      </div>
    </>
  )
}

export function DeliveryPage({ base, id }: { base: string; id: string }) {
  const d = useAsync(() => get<DeliveryDetail>(`/v1/webhooks/deliveries/${id}`), [id])
  const webhook = useAsync(() => (d.data ? get<Webhook>(`/v1/webhooks/${d.data.webhook_id}`).catch(() => null) : Promise.resolve(null)), [d.data?.webhook_id])
  const [notice, setNotice] = useState<string | null>(null)
  const retry = useSubmit(async () => {
    await post(`/v1/webhooks/deliveries/${id}/retry`)
    setNotice('A new attempt is queued; this page shows it when it has been made.')
    d.reload()
  })
  const waiting = d.data && (d.data.status === 'pending' || (notice !== null && d.data.attempt_log.every((a) => a.trigger !== 'manual' || a.response_code === null)))
  useRefresh(d, waiting ? 1500 : 10_000)
  if (!d.data) return d.error ? <ErrorBox>{d.error}</ErrorBox> : <Loading />
  const x = d.data
  return (
    <>
      <PageHead title={x.event} sub={<span class="mono">{x.id}</span>}>
        <Badge label={x.status} />
        <button type="button" class="btn btn-primary" disabled={retry.busy || x.status === 'pending'} onClick={() => retry.run()}>Retry now</button>
      </PageHead>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorBox>{retry.error ?? d.error}</ErrorBox>
      <section class="card">
        <dl class="facts">
          <dt>Endpoint</dt><dd>{webhook.data ? <a class="mono url" href={`${base}/endpoints/${x.webhook_id}`}>{webhook.data.url}</a> : <span class="mono">{x.webhook_id}</span>}</dd>
          <dt>Event id</dt><dd class="mono">{x.event_id}</dd>
          <dt>Created</dt><dd>{formatTime(x.created_at)}</dd>
          <dt>Delivered</dt><dd>{x.delivered_at ? formatTime(x.delivered_at) : '—'}</dd>
          <dt>Next retry</dt><dd>{x.next_retry_at ? <Time at={x.next_retry_at} /> : '—'}</dd>
        </dl>
      </section>
      <section class="card">
        <h2>Attempts</h2>
        {x.attempt_log.length === 0 ? <Empty title="No attempt yet">The first attempt is made within a moment of the event.</Empty> : (
          <ol class="timeline">
            {x.attempt_log.map((a) => {
              const ok = a.response_code !== null && a.response_code >= 200 && a.response_code < 300
              return (
                <li key={a.attempt} class={ok ? 'ok' : 'bad'} data-attempt={a.attempt}>
                  <div class="timeline-head">
                    <strong>#{a.attempt}</strong>
                    <Badge label={a.response_code === null ? 'no response' : String(a.response_code)} tone={ok ? 'ok' : 'bad'} />
                    <span>{formatTime(a.at)}</span>
                    <span class="muted">{a.duration_ms} ms</span>
                    <span class="muted">{a.trigger === 'manual' ? 'retried by hand' : 'automatic'}</span>
                  </div>
                  {a.error ? <p class="attempt-error">{a.error}</p> : null}
                  {a.response_body ? <details><summary>Response body</summary><pre class="json">{a.response_body}</pre></details> : null}
                </li>
              )
            })}
          </ol>
        )}
      </section>
      <section class="card">
        <h2>Payload</h2>
        <p class="hint">The exact body sent to the endpoint.</p>
        <Json value={x.payload} label="Payload" />
      </section>
    </>
  )
}
