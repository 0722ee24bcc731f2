import { useState } from 'preact/hooks'
import { del, get, list, patch, post } from '../api.ts'
import { navigate } from '../router.ts'
import type { CreatedWebhook, Delivery, EventType, Webhook } from '../types.ts'
import { Badge, Confirm, Empty, ErrorBox, Loading, Notice, PageHead, SecretOnce, Time, useAsync, useSubmit } from '../ui.tsx'
import { DeliveryTable } from './deliveries.tsx'

/**
 * A new signing secret in the Standard Webhooks form (CONTRACT §16): `whsec_` + base64 of 32
 * random bytes, which the Standard Webhooks libraries take as it is. (Creating an endpoint
 * leaves it to the API, which generates the same; rotating sends one made here.)
 */
function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return 'whsec_' + btoa(String.fromCharCode(...bytes))
}

const SECRET_USE = 'Your receiver checks each delivery\'s webhook-signature with it as it is (the Standard Webhooks libraries, such as standardwebhooks or svix, take it unchanged), '
  + 'or X-Webhook-Signature: the hex HMAC-SHA256 of the body keyed with the whole string (travelops verify --secret).'

export function statusOf(h: Webhook): { label: string; tone: string } {
  if (h.disabled_at) return { label: `Disabled (${h.disabled_reason === 'gone' ? '410 Gone' : 'failing'})`, tone: 'bad' }
  if (!h.active) return { label: 'Inactive', tone: 'muted' }
  if (h.failing_since) return { label: 'Failing', tone: 'warn' }
  return { label: 'Active', tone: 'ok' }
}

export function Endpoints({ base }: { base: string }) {
  const webhooks = useAsync(() => list<Webhook>('/v1/webhooks', { limit: '100' }), [base])
  return (
    <>
      <PageHead title="Endpoints" sub="Where this tenant's events are sent: each endpoint gets the events it subscribes to, signed with its secret.">
        <a class="btn btn-primary" href={`${base}/endpoints/new`}>Add endpoint</a>
      </PageHead>
      <ErrorBox>{webhooks.error}</ErrorBox>
      {!webhooks.data ? (webhooks.error ? null : <Loading />) : webhooks.data.data.length === 0 ? (
        <Empty title="No endpoints yet">
          <p>Add the URL of a receiver and pick the events it should get. Every delivery is signed, recorded and retried.</p>
          <a class="btn btn-primary" href={`${base}/endpoints/new`}>Add your first endpoint</a>
        </Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
            <tbody>
              {webhooks.data.data.map((h) => {
                const s = statusOf(h)
                return (
                  <tr key={h.id}>
                    <td><a class="mono url" href={`${base}/endpoints/${h.id}`}>{h.url}</a></td>
                    <td class="events" data-label="Events">{h.events.includes('*') ? 'All events' : h.events.join(', ')}</td>
                    <td data-label="Status"><Badge label={s.label} tone={s.tone} /></td>
                    <td data-label="Created"><Time at={h.created_at} /></td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
    </>
  )
}

/** The catalog's events as checkboxes, with "every event" on top. */
function EventPicker({ value, onChange }: { value: string[]; onChange: (v: string[]) => void }) {
  const catalog = useAsync(() => get<EventType[]>('/v1/webhooks/event-types'), [])
  const all = value.includes('*')
  const toggle = (name: string, on: boolean) => onChange(on ? [...value.filter((v) => v !== '*'), name] : value.filter((v) => v !== name))
  return (
    <fieldset class="picker">
      <legend>Events</legend>
      <label class="check strong"><input type="checkbox" checked={all} onChange={(e) => onChange((e.target as HTMLInputElement).checked ? ['*'] : [])} /> Every event, including ones added later</label>
      <ErrorBox>{catalog.error}</ErrorBox>
      <div class="picker-grid">
        {(catalog.data ?? []).map((e) => (
          <label class="check" key={e.name} title={e.description}>
            <input type="checkbox" name="event" value={e.name} disabled={all} checked={all || value.includes(e.name)} onChange={(ev) => toggle(e.name, (ev.target as HTMLInputElement).checked)} />
            <span><span class="mono">{e.name}</span><span class="hint block">{e.description}</span></span>
          </label>
        ))}
      </div>
    </fieldset>
  )
}

type HeaderRow = { name: string; value: string }

function HeaderRows({ rows, onChange }: { rows: HeaderRow[]; onChange: (r: HeaderRow[]) => void }) {
  const set = (i: number, k: keyof HeaderRow, v: string) => onChange(rows.map((r, j) => (j === i ? { ...r, [k]: v } : r)))
  return (
    <fieldset>
      <legend>Custom headers <span class="hint">(sent with every delivery; values are never shown again)</span></legend>
      {rows.map((r, i) => (
        <div class="header-row" key={i}>
          <input aria-label={`Header ${i + 1} name`} placeholder="X-Header-Name" value={r.name} onInput={(e) => set(i, 'name', (e.target as HTMLInputElement).value)} />
          <input aria-label={`Header ${i + 1} value`} placeholder="value" value={r.value} onInput={(e) => set(i, 'value', (e.target as HTMLInputElement).value)} />
          <button type="button" class="btn btn-quiet" onClick={() => onChange(rows.filter((_, j) => j !== i))} aria-label={`Remove header ${i + 1}`}>Remove</button>
        </div>
      ))}
      <button type="button" class="btn" onClick={() => onChange([...rows, { name: '', value: '' }])}>Add a header</button>
    </fieldset>
  )
}

const _headers = (rows: HeaderRow[]) => Object.fromEntries(rows.filter((r) => r.name.trim()).map((r) => [r.name.trim(), r.value]))

export function NewEndpoint({ base }: { base: string }) {
  const [url, setUrl] = useState('')
  const [events, setEvents] = useState<string[]>([])
  const [headers, setHeaders] = useState<HeaderRow[]>([])
  const [created, setCreated] = useState<{ webhook: Webhook; secret: string } | null>(null)
  const submit = useSubmit(async () => {
    // No secret in the body: the API generates one and shows it in this answer only.
    const webhook = await post<CreatedWebhook>('/v1/webhooks', { url: url.trim(), events, ...(headers.length ? { headers: _headers(headers) } : {}) })
    setCreated({ webhook, secret: webhook.secret ?? '' })
  })
  if (created) {
    return (
      <>
        <PageHead title="Endpoint added" sub={<span class="mono">{created.webhook.url}</span>} />
        <div class="card">
          <SecretOnce label="Signing secret" value={created.secret}
            note={`Copy it now: this is the only time it is shown. ${SECRET_USE}`} />
          <div class="actions"><a class="btn btn-primary" href={`${base}/endpoints/${created.webhook.id}`}>Go to the endpoint</a></div>
        </div>
      </>
    )
  }
  return (
    <>
      <PageHead title="Add an endpoint" sub="The receiver's HTTPS URL and the events it should get. A signing secret is generated for you." />
      <form class="card form" onSubmit={(e) => {
        e.preventDefault()
        void submit.run()
      }}>
        <label>URL<input name="url" type="url" required placeholder="https://example.com/webhooks/travelops" value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} /></label>
        <EventPicker value={events} onChange={setEvents} />
        <HeaderRows rows={headers} onChange={setHeaders} />
        <ErrorBox>{submit.error}</ErrorBox>
        <div class="actions">
          <a class="btn" href={`${base}/endpoints`}>Cancel</a>
          <button class="btn btn-primary" type="submit" disabled={submit.busy}>Add endpoint</button>
        </div>
      </form>
    </>
  )
}

export function EndpointDetail({ base, id }: { base: string; id: string }) {
  const webhook = useAsync(() => get<Webhook>(`/v1/webhooks/${id}`), [id])
  const recent = useAsync(() => list<Delivery>('/v1/webhooks/deliveries', { webhook_id: id, limit: '10' }), [id])
  const catalog = useAsync(() => get<EventType[]>('/v1/webhooks/event-types'), [])
  const [editing, setEditing] = useState(false)
  const [url, setUrl] = useState('')
  const [events, setEvents] = useState<string[]>([])
  const [headers, setHeaders] = useState<HeaderRow[] | null>(null)
  const [secret, setSecret] = useState<string | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [ask, setAsk] = useState<'delete' | 'rotate' | null>(null)
  const [testEvent, setTestEvent] = useState('')
  const [since, setSince] = useState('')
  const act = useSubmit(async (what: () => Promise<string>) => {
    setNotice(await what())
    webhook.reload()
    recent.reload()
  })
  const save = useSubmit(async () => {
    await patch<Webhook>(`/v1/webhooks/${id}`, { url: url.trim(), events, ...(headers ? { headers: headers.length ? _headers(headers) : null } : {}) })
    setEditing(false)
    setNotice('Saved.')
    webhook.reload()
  })
  if (!webhook.data) return webhook.error ? <ErrorBox>{webhook.error}</ErrorBox> : <Loading />
  const h = webhook.data
  const s = statusOf(h)
  const receives = h.events.includes('*') ? (catalog.data ?? []).map((e) => e.name) : h.events
  return (
    <>
      <PageHead title="Endpoint" sub={<span class="mono url">{h.url}</span>}>
        <Badge label={s.label} tone={s.tone} />
      </PageHead>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorBox>{act.error}</ErrorBox>
      {secret ? <div class="card"><SecretOnce label="New signing secret" value={secret} note={`Copy it now: it is shown once. Deliveries from now on are signed with it. ${SECRET_USE}`} /></div> : null}
      <section class="card">
        {editing ? (
          <form class="form" onSubmit={(e) => {
            e.preventDefault()
            void save.run()
          }}>
            <label>URL<input name="url" type="url" required value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} /></label>
            <EventPicker value={events} onChange={setEvents} />
            {headers === null
              ? <p class="hint">Custom headers: {h.header_names.length ? h.header_names.join(', ') : 'none'}. <button type="button" class="btn btn-quiet" onClick={() => setHeaders([])}>Replace them</button></p>
              : <HeaderRows rows={headers} onChange={setHeaders} />}
            <ErrorBox>{save.error}</ErrorBox>
            <div class="actions">
              <button type="button" class="btn" onClick={() => setEditing(false)}>Cancel</button>
              <button type="submit" class="btn btn-primary" disabled={save.busy}>Save</button>
            </div>
          </form>
        ) : (
          <dl class="facts">
            <dt>Id</dt><dd class="mono">{h.id}</dd>
            <dt>Events</dt><dd>{h.events.includes('*') ? 'All events' : h.events.join(', ')}</dd>
            <dt>Custom headers</dt><dd>{h.header_names.length ? <span class="mono">{h.header_names.join(', ')}</span> : <span class="muted">none</span>}</dd>
            <dt>Retries</dt><dd>{h.retry_count}</dd>
            {h.disabled_at ? (<><dt>Disabled</dt><dd><Time at={h.disabled_at} /> — {h.disabled_reason === 'gone' ? 'the receiver answered 410 Gone' : 'every attempt failed for too long'}</dd></>) : null}
            {h.failing_since && !h.disabled_at ? (<><dt>Failing since</dt><dd><Time at={h.failing_since} /></dd></>) : null}
            <dt>Created</dt><dd><Time at={h.created_at} /></dd>
          </dl>
        )}
        {!editing ? (
          <div class="actions wrap">
            <button type="button" class="btn" onClick={() => {
              setUrl(h.url)
              setEvents(h.events)
              setHeaders(null)
              setEditing(true)
            }}>Edit</button>
            {h.active
              ? <button type="button" class="btn" disabled={act.busy} onClick={() => act.run(async () => (await patch(`/v1/webhooks/${id}`, { active: false }), 'Disabled: nothing is sent to it until it is enabled again.'))}>Disable</button>
              : <button type="button" class="btn" disabled={act.busy} onClick={() => act.run(async () => (await patch(`/v1/webhooks/${id}`, { active: true }), 'Enabled.'))}>Enable</button>}
            <button type="button" class="btn" onClick={() => setAsk('rotate')}>Rotate secret</button>
            <button type="button" class="btn btn-danger" onClick={() => setAsk('delete')}>Delete</button>
          </div>
        ) : null}
      </section>
      <section class="card">
        <h2>Send a test event</h2>
        <p class="hint">An example record with <code>"test": true</code>, sent to this endpoint only, as an ordinary delivery.</p>
        <form class="inline-form" onSubmit={(e) => {
          e.preventDefault()
          void act.run(async () => {
            const d = await post<Delivery>(`/v1/webhooks/${id}/test`, testEvent ? { event: testEvent } : {})
            return `Test ${d.event} queued as ${d.id}.`
          })
        }}>
          <label>Event
            <select value={testEvent} onChange={(e) => setTestEvent((e.target as HTMLSelectElement).value)}>
              <option value="">Default ({receives[0] ?? 'order.created'})</option>
              {receives.map((n) => <option key={n} value={n}>{n}</option>)}
            </select>
          </label>
          <button type="submit" class="btn btn-primary" disabled={act.busy || !h.active}>Send test event</button>
        </form>
      </section>
      <section class="card">
        <h2>Replay failed deliveries</h2>
        <p class="hint">Queues a new attempt of every failed delivery of this endpoint created since the time you choose.</p>
        <form class="inline-form" onSubmit={(e) => {
          e.preventDefault()
          void act.run(async () => {
            const r = await post<{ queued: number }>('/v1/webhooks/deliveries/replay', { webhook_id: id, status: 'failed', ...(since ? { since: new Date(since).toISOString() } : {}) })
            return r.queued === 1 ? '1 delivery queued again.' : `${r.queued} deliveries queued again.`
          })
        }}>
          <label>Since<input type="datetime-local" value={since} onInput={(e) => setSince((e.target as HTMLInputElement).value)} /></label>
          <button type="submit" class="btn" disabled={act.busy || !h.active}>Replay failed</button>
        </form>
      </section>
      <section class="card">
        <h2>Recent deliveries</h2>
        <ErrorBox>{recent.error}</ErrorBox>
        {recent.data ? <DeliveryTable base={base} rows={recent.data.data} webhooks={[h]} endpoint={false} /> : <Loading />}
        <p><a href={`${base}/deliveries?webhook_id=${h.id}`}>All deliveries of this endpoint</a></p>
      </section>
      <Confirm open={ask === 'rotate'} title="Rotate the signing secret?" confirm="Rotate" onClose={() => setAsk(null)}
        onConfirm={async () => {
          const next = newSecret()
          await patch(`/v1/webhooks/${id}`, { secret: next })
          setSecret(next)
          setNotice('The secret was rotated.')
        }}>
        <p>Deliveries from now on are signed with a new secret. Your receiver must be given the new one.</p>
      </Confirm>
      <Confirm open={ask === 'delete'} title="Delete this endpoint?" confirm="Delete" danger onClose={() => setAsk(null)}
        onConfirm={async () => {
          await del(`/v1/webhooks/${id}`)
          navigate(`${base}/endpoints`)
        }}>
        <p>Nothing more is sent to <span class="mono">{h.url}</span>. Its delivery records stay.</p>
      </Confirm>
    </>
  )
}
