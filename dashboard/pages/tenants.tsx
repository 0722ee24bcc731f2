import { useState } from 'preact/hooks'
import { list, post } from '../api.ts'
import { navigate } from '../router.ts'
import type { TenantSummary } from '../types.ts'
import { Badge, Empty, ErrorBox, Loading, PageHead, Time, useAsync, useSubmit } from '../ui.tsx'

export function Tenants() {
  const [cursor, setCursor] = useState<string[]>([])
  const page = useAsync(() => list<TenantSummary>('/v1/admin/tenants', { limit: '50', cursor: cursor[cursor.length - 1] }), [cursor.join()])
  const [name, setName] = useState('')
  const create = useSubmit(async () => {
    const t = await post<TenantSummary>('/v1/admin/tenants', { name: name.trim() })
    setName('')
    navigate(`/dashboard/t/${t.id}/overview`)
  })
  return (
    <>
      <PageHead title="Tenants" sub="Every operator account on this server. Open one to work on its endpoints, deliveries and keys." />
      <form class="card inline-form" aria-label="Create a tenant" onSubmit={(e) => {
        e.preventDefault()
        void create.run()
      }}>
        <label>New tenant<input name="tenant-name" required maxLength={200} placeholder="e.g. Nordic Fjord Tours" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} /></label>
        <button type="submit" class="btn btn-primary" disabled={create.busy}>Create tenant</button>
        <ErrorBox>{create.error}</ErrorBox>
      </form>
      <ErrorBox>{page.error}</ErrorBox>
      {!page.data ? (page.error ? null : <Loading />) : page.data.data.length === 0 ? (
        <Empty title="No tenants yet">Create the first one above, or with <code>travelops tenants create</code>.</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Keys</th><th scope="col">Endpoints</th><th scope="col">Failing</th><th scope="col">Created</th></tr></thead>
            <tbody>
              {page.data.data.map((t) => (
                <tr key={t.id} data-tenant={t.id}>
                  <td><a href={`/dashboard/t/${t.id}/overview`}>{t.name}</a></td>
                  <td class="mono" data-label="Id">{t.id}</td>
                  <td class="num" data-label="Keys">{t.keys}</td>
                  <td class="num" data-label="Endpoints">{t.webhooks}</td>
                  <td data-label="Failing">{t.webhooks_failing ? <Badge label={String(t.webhooks_failing)} tone="warn" /> : <span class="muted">0</span>}</td>
                  <td data-label="Created"><Time at={t.created_at} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div class="pager">
        <button type="button" class="btn" disabled={cursor.length === 0} onClick={() => setCursor(cursor.slice(0, -1))}>Newer</button>
        <button type="button" class="btn" disabled={!page.data?.has_more} onClick={() => setCursor([...cursor, page.data!.next_cursor!])}>Older</button>
      </div>
    </>
  )
}
