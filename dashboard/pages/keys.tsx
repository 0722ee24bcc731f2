import { useState } from 'preact/hooks'
import { del, list, post } from '../api.ts'
import type { ApiKey, CreatedApiKey } from '../types.ts'
import { READ_ONLY_RESOURCES, RESOURCES } from '../../src/lib/scopes.ts'
import { Badge, Confirm, Empty, ErrorBox, Loading, PageHead, SecretOnce, Time, useAsync, useSubmit } from '../ui.tsx'

const EXPIRIES = [['', 'Never'], ['30d', '30 days'], ['90d', '90 days'], ['365d', '1 year']] as const

function keyState(k: ApiKey): string {
  if (k.revoked_at) return 'Revoked'
  if (k.expires_at && Date.parse(k.expires_at) <= Date.now()) return 'Expired'
  return 'Active'
}

export function Keys() {
  const keys = useAsync(() => list<ApiKey>('/v1/keys', { limit: '100' }), [])
  const [creating, setCreating] = useState(false)
  const [created, setCreated] = useState<CreatedApiKey | null>(null)
  const [revoking, setRevoking] = useState<ApiKey | null>(null)
  return (
    <>
      <PageHead title="API keys" sub="Keys give programs access to this tenant's API. A key is shown once, when it is created.">
        {!creating ? <button type="button" class="btn btn-primary" onClick={() => {
          setCreated(null)
          setCreating(true)
        }}>Create key</button> : null}
      </PageHead>
      {created ? (
        <div class="card">
          <SecretOnce label={`New key${created.name ? ` “${created.name}”` : ''}`} value={created.key ?? ''}
            note="Copy it now: this is the only time it is shown. Send it as Authorization: Bearer <key>." />
        </div>
      ) : null}
      {creating ? <NewKey onDone={(k) => {
        setCreating(false)
        if (k) {
          setCreated(k)
          keys.reload()
        }
      }} /> : null}
      <ErrorBox>{keys.error}</ErrorBox>
      {!keys.data ? (keys.error ? null : <Loading />) : keys.data.data.length === 0 ? (
        <Empty title="No API keys yet">Create one for each program that uses the API, with only the scopes it needs.</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Rate limit</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">State</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>
              {keys.data.data.map((k) => {
                const state = keyState(k)
                return (
                  <tr key={k.id} data-key={k.id}>
                    <td>{k.name ?? <span class="muted">unnamed</span>}</td>
                    <td class="mono" data-label="Prefix">{k.prefix}…</td>
                    <td class="mono scopes" data-label="Scopes">{k.scopes.join(' ')}</td>
                    <td class="num" data-label="Rate limit">{k.rate_limit === null ? 'default' : `${k.rate_limit}/h`}</td>
                    <td data-label="Last used"><Time at={k.last_used_at} /></td>
                    <td data-label="Expires">{k.expires_at ? <Time at={k.expires_at} /> : <span class="muted">never</span>}</td>
                    <td data-label="State"><Badge label={state} /></td>
                    <td class="row-actions">{state === 'Active' ? <button type="button" class="btn btn-quiet btn-danger-text" onClick={() => setRevoking(k)}>Revoke</button> : null}</td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
      <Confirm open={revoking !== null} title="Revoke this key?" confirm="Revoke" danger onClose={() => setRevoking(null)}
        onConfirm={async () => {
          await del(`/v1/keys/${revoking!.id}`)
          keys.reload()
        }}>
        <p>Programs using <span class="mono">{revoking?.prefix}…</span>{revoking?.name ? ` (${revoking.name})` : ''} get 401 from their next request. This cannot be undone.</p>
      </Confirm>
    </>
  )
}

function NewKey({ onDone }: { onDone: (k: CreatedApiKey | null) => void }) {
  const [name, setName] = useState('')
  const [full, setFull] = useState(true)
  const [scopes, setScopes] = useState<Record<string, '' | 'read' | 'write'>>({})
  const [limit, setLimit] = useState('')
  const [expires, setExpires] = useState('')
  const submit = useSubmit(async () => {
    const picked = full ? ['*'] : Object.entries(scopes).filter(([, a]) => a).map(([r, a]) => `${r}:${a}`)
    const k = await post<CreatedApiKey>('/v1/keys', {
      ...(name.trim() ? { name: name.trim() } : {}), scopes: picked,
      ...(limit ? { rate_limit: Number(limit) } : {}), ...(expires ? { expires_in: expires } : {}),
    })
    onDone(k)
  })
  return (
    <form class="card form" aria-label="New API key" onSubmit={(e) => {
      e.preventDefault()
      void submit.run()
    }}>
      <h2>New API key</h2>
      <label>Name<input name="name" placeholder="e.g. Booking website" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} /></label>
      <fieldset>
        <legend>Access</legend>
        <label class="check"><input type="radio" name="access" checked={full} onChange={() => setFull(true)} /> Everything (<code>*</code>)</label>
        <label class="check"><input type="radio" name="access" checked={!full} onChange={() => setFull(false)} /> Only what I pick</label>
        {!full ? (
          <div class="scope-grid">
            {RESOURCES.map((r) => (
              <label key={r}>{r}
                <select value={scopes[r] ?? ''} onChange={(e) => setScopes({ ...scopes, [r]: (e.target as HTMLSelectElement).value as '' | 'read' | 'write' })}>
                  <option value="">No access</option><option value="read">Read</option>
                  {READ_ONLY_RESOURCES.includes(r) ? null : <option value="write">Read and write</option>}
                </select>
              </label>
            ))}
          </div>
        ) : null}
      </fieldset>
      <div class="two">
        <label>Requests per hour<input type="number" min="1" inputMode="numeric" placeholder="server default" value={limit} onInput={(e) => setLimit((e.target as HTMLInputElement).value)} /></label>
        <label>Expires
          <select value={expires} onChange={(e) => setExpires((e.target as HTMLSelectElement).value)}>
            {EXPIRIES.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
          </select>
        </label>
      </div>
      <ErrorBox>{submit.error}</ErrorBox>
      <div class="actions">
        <button type="button" class="btn" onClick={() => onDone(null)}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled={submit.busy}>Create key</button>
      </div>
    </form>
  )
}
