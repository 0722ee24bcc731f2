import { useEffect } from 'preact/hooks'
import { get } from '../api.ts'
import type { EventType } from '../types.ts'
import { ErrorBox, Json, Loading, PageHead, useAsync } from '../ui.tsx'

export function EventCatalog({ base }: { base: string }) {
  const catalog = useAsync(() => get<EventType[]>('/v1/webhooks/event-types'), [])
  // An address naming one event (…/event-types#order.created): shown once the catalog is there.
  useEffect(() => {
    if (catalog.data && location.hash.length > 1) document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView()
  }, [!catalog.data])
  return (
    <>
      <PageHead title="Event catalog" sub={<>The events an endpoint can subscribe to, what sends each, and a body exactly as a receiver gets it. The events that happened: <a href={`${base}/events`}>Events</a>.</>} />
      <ErrorBox>{catalog.error}</ErrorBox>
      {!catalog.data ? (catalog.error ? null : <Loading />) : (
        <div class="catalog">
          {catalog.data.map((e) => (
            <section class="card" key={e.name} id={e.name}>
              <h2 class="mono">{e.name}</h2>
              <p>{e.description}</p>
              {e.emitted_by.length ? <p class="hint">Sent after: {e.emitted_by.map((r, i) => <span key={r}>{i ? ', ' : ''}<code>{r}</code></span>)}</p> : null}
              <details>
                <summary>Example body</summary>
                <Json value={e.example} label={`Example ${e.name} body`} />
              </details>
            </section>
          ))}
        </div>
      )}
    </>
  )
}
