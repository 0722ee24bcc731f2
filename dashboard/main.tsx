import './style.css'
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, del, get, messageOf, onSignedOut, setTenant } from './api.ts'
import { match, navigate, onLinkClick, useLocation } from './router.ts'
import type { SessionInfo, TenantSummary } from './types.ts'
import { ErrorBox, Loading } from './ui.tsx'
import { Overview } from './pages/overview.tsx'
import { Endpoints, EndpointDetail, NewEndpoint } from './pages/endpoints.tsx'
import { Deliveries, DeliveryPage } from './pages/deliveries.tsx'
import { EventCatalog } from './pages/event-types.tsx'
import { Events } from './pages/events.tsx'
import { EventPage } from './pages/event.tsx'
import { Keys } from './pages/keys.tsx'
import { Tenants } from './pages/tenants.tsx'

type Theme = 'system' | 'light' | 'dark'
const THEME_KEY = 'travelops-theme'

function applyTheme(t: Theme) {
  if (t === 'system') delete document.documentElement.dataset.theme
  else document.documentElement.dataset.theme = t
}

function SignIn({ onSignedIn }: { onSignedIn: (s: SessionInfo) => void }) {
  const [error, setError] = useState<string | null>(null)
  useEffect(() => {
    const token = location.hash.slice(1)
    // The token leaves the address bar (and the history) at once, used or not.
    history.replaceState(null, '', '/dashboard/signin')
    if (!token) {
      setError('This address has no sign-in token. Open the whole link you were given.')
      return
    }
    api<{ data: SessionInfo }>('POST', '/v1/dashboard/sessions', { body: { token } }).then((r) => onSignedIn(r.data), (err) => setError(messageOf(err)))
  }, [])
  return (
    <main class="center-card">
      <div class="card narrow">
        <div class="brand brand-big"><span class="logo" aria-hidden="true" />travelops</div>
        {error
          ? (<>
              <h1>Could not sign you in</h1>
              <ErrorBox>{error}</ErrorBox>
              <p class="hint">An operator creates a new link with <code>travelops dashboard link</code>; a tenant's back office with <code>POST /v1/dashboard/links</code>.</p>
            </>)
          : <p class="loading">Signing you in…</p>}
      </div>
    </main>
  )
}

function SignedOut() {
  return (
    <main class="center-card">
      <div class="card narrow">
        <div class="brand brand-big"><span class="logo" aria-hidden="true" />travelops</div>
        <h1>You are signed out</h1>
        <p>The dashboard opens with a one-time sign-in link. On the server, run:</p>
        <pre class="json">travelops dashboard link</pre>
        <p class="hint">Add <code>--tenant ten_…</code> for a link that sees one tenant only.</p>
      </div>
    </main>
  )
}

function ThemeSwitch() {
  const [theme, setTheme] = useState<Theme>(() => (localStorage.getItem(THEME_KEY) as Theme | null) ?? 'system')
  useEffect(() => {
    applyTheme(theme)
    localStorage.setItem(THEME_KEY, theme)
  }, [theme])
  return (
    <label class="theme">
      <span class="sr-only">Theme</span>
      <select value={theme} onChange={(e) => setTheme((e.target as HTMLSelectElement).value as Theme)} aria-label="Theme">
        <option value="system">System theme</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  )
}

const TENANT_PAGES = [
  ['overview', 'Overview'], ['endpoints', 'Endpoints'], ['deliveries', 'Deliveries'], ['events', 'Events'], ['event-types', 'Event catalog'], ['keys', 'API keys'],
] as const

function Shell({ session, path, onSignOut }: { session: SessionInfo; path: string; onSignOut: () => void }) {
  const operator = session.role === 'operator'
  const inTenant = match('/dashboard/t/:tenant', path.split('/').slice(0, 4).join('/'))
  const tenantId = operator ? inTenant?.tenant ?? null : session.tenant_id
  setTenant(operator ? tenantId : null)
  const [tenantName, setTenantName] = useState<string | null>(session.tenant_name)
  useEffect(() => {
    if (!operator) return
    setTenantName(null)
    if (tenantId) get<TenantSummary>(`/v1/admin/tenants/${tenantId}`).then((t) => setTenantName(t.name), () => setTenantName('Unknown tenant'))
  }, [tenantId])
  useEffect(() => {
    if (path === '/dashboard' || path === '/dashboard/signin') navigate(operator ? '/dashboard/tenants' : `/dashboard/t/${session.tenant_id}/overview`, true)
    else if (!operator && inTenant && inTenant.tenant !== session.tenant_id) navigate(`/dashboard/t/${session.tenant_id}/overview`, true)
  }, [path])
  const base = tenantId ? `/dashboard/t/${tenantId}` : ''
  const page = _page(path, base, operator)
  const current = path.split('/')[4] ?? (path.startsWith('/dashboard/tenants') ? 'tenants' : '')
  return (
    <div class="shell" onClick={onLinkClick}>
      <a class="skip" href="#main">Skip to content</a>
      <header class="topbar">
        <a class="brand" href={operator ? '/dashboard/tenants' : `${base}/overview`}><span class="logo" aria-hidden="true" />travelops</a>
        <div class="who">
          {tenantId ? <span class="tenant-name" title={tenantId}>{tenantName ?? '…'}</span> : <span class="tenant-name">All tenants</span>}
          <span class="role">{operator ? 'Operator' : 'Tenant'}</span>
        </div>
        <div class="top-actions">
          <ThemeSwitch />
          <button type="button" class="btn btn-quiet" onClick={onSignOut}>Sign out</button>
        </div>
      </header>
      <nav class="sidenav" aria-label="Sections">
        {operator ? <a href="/dashboard/tenants" aria-current={current === 'tenants' ? 'page' : undefined}>Tenants</a> : null}
        {tenantId ? TENANT_PAGES.map(([slug, label]) => (
          <a key={slug} href={`${base}/${slug}`} aria-current={current === slug ? 'page' : undefined}>{label}</a>
        )) : <p class="nav-hint">Open a tenant to see its endpoints, deliveries and keys.</p>}
      </nav>
      <main id="main" class="content" tabIndex={-1}>{page}</main>
    </div>
  )
}

function _page(path: string, base: string, operator: boolean) {
  if (operator && path === '/dashboard/tenants') return <Tenants />
  if (!base) return <Loading />
  const rest = path.slice(base.length)
  let m: Record<string, string> | null
  if (rest === '/overview') return <Overview base={base} />
  if (rest === '/endpoints') return <Endpoints base={base} />
  if (rest === '/endpoints/new') return <NewEndpoint base={base} />
  if ((m = match('/endpoints/:id', rest))) return <EndpointDetail base={base} id={m.id!} />
  if (rest === '/deliveries') return <Deliveries base={base} />
  if ((m = match('/deliveries/:id', rest))) return <DeliveryPage base={base} id={m.id!} />
  // The catalog lived at /events until the events themselves did: an address naming one of its events goes on to it.
  if (rest === '/events' && location.hash.length > 1) return <Redirect to={`${base}/event-types${location.hash}`} />
  if (rest === '/events') return <Events base={base} />
  if ((m = match('/events/:id', rest))) return <EventPage base={base} id={m.id!} />
  if (rest === '/event-types') return <EventCatalog base={base} />
  if (rest === '/keys') return <Keys />
  return <Loading />
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, true), [to])
  return <Loading />
}

function App() {
  const { path } = useLocation()
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined)
  useEffect(() => onSignedOut(() => setSession(null)), [])
  useEffect(() => {
    if (path === '/dashboard/signin' || session !== undefined) return
    get<SessionInfo>('/v1/dashboard/session').then(setSession, () => setSession(null))
  }, [path, session])
  if (path === '/dashboard/signin' && !session) {
    return <SignIn onSignedIn={(s) => {
      setSession(s)
      navigate('/dashboard', true)
    }} />
  }
  if (session === undefined) return <Loading />
  if (session === null) return <SignedOut />
  const signOut = () => {
    del('/v1/dashboard/session').finally(() => {
      setSession(null)
      navigate('/dashboard', true)
    })
  }
  return <Shell session={session} path={path} onSignOut={signOut} />
}

applyTheme((localStorage.getItem(THEME_KEY) as Theme | null) ?? 'system')
const root = document.getElementById('app')!
root.textContent = '' // the page's "Loading…" line
render(<App />, root)
