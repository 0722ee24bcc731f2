/** Resources a scope can name (CONTRACT §5, `keys` of §12, `events` of §15). Deliveries belong to `webhooks`. */
export const RESOURCES = [
  'orders', 'customers', 'products', 'itineraries', 'invoices', 'payments', 'suppliers', 'content', 'inquiries', 'webhooks', 'keys', 'events',
] as const
export type Resource = (typeof RESOURCES)[number]
export type Action = 'read' | 'write'

/**
 * Resources that are only ever read (CONTRACT §15: `events:read`): their one scope is
 * `<resource>:read`; `:write` and `:*` would name nothing and are refused like an unknown scope.
 */
export const READ_ONLY_RESOURCES: readonly Resource[] = ['events']

/** The widest scope of one resource: `<resource>:*`, or `<resource>:read` for a read-only one. */
export const wholeScope = (r: Resource): string => (READ_ONLY_RESOURCES.includes(r) ? `${r}:read` : `${r}:*`)

/** Every scope a key may hold: `*`, then each resource's `read`, `write` and `*` (only `read` for a read-only one). */
export const SCOPES: readonly string[] = ['*', ...RESOURCES.flatMap((r) => READ_ONLY_RESOURCES.includes(r) ? [`${r}:read`] : [`${r}:read`, `${r}:write`, `${r}:*`])]

export interface RequiredScope {
  resource: Resource
  action: Action
}

export function isValidScope(scope: string): boolean {
  return SCOPES.includes(scope)
}

/** `write` includes `read`; `<resource>:*` is both; `*` is everything. */
export function grants(scopes: readonly string[], need: RequiredScope): boolean {
  for (const s of scopes) {
    if (s === '*' || s === `${need.resource}:*` || s === `${need.resource}:write`) return true
    if (need.action === 'read' && s === `${need.resource}:read`) return true
  }
  return false
}

export const scopeName = (s: RequiredScope) => `${s.resource}:${s.action}`

/**
 * What a route needs: a scope of the caller's key (or session), `all` for the `*` scope itself,
 * `session` for any signed-in dashboard browser, `operator` for the operator's dashboard
 * session (CONTRACT §14), or nothing (`public`).
 */
export type RouteScope = RequiredScope | 'public' | 'all' | 'session' | 'operator'
export type AuthScope = Exclude<RouteScope, 'public'>

/** The x-required-scope of the OpenAPI document and the 403 message's name for it. */
export function describeScope(s: AuthScope): string {
  if (s === 'all') return '*'
  if (s === 'session') return 'dashboard session'
  if (s === 'operator') return 'operator dashboard session'
  return scopeName(s)
}

/** Whether a route works on one tenant's records (so an operator session must name the tenant). */
export const tenantScoped = (s: AuthScope) => s !== 'session' && s !== 'operator'

/** Whether a caller holding `scopes` (a session: its role) may call a route needing `need`. */
export function allows(need: AuthScope, scopes: readonly string[], role: 'operator' | 'tenant' | undefined): boolean {
  if (need === 'operator') return role === 'operator'
  if (need === 'session') return role !== undefined
  if (need === 'all') return scopes.includes('*')
  return grants(scopes, need)
}
