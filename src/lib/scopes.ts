/** Resources a scope can name (CONTRACT §5, and `keys` of §12). Deliveries belong to `webhooks`. */
export const RESOURCES = [
  'orders', 'customers', 'products', 'itineraries', 'invoices', 'payments', 'suppliers', 'content', 'inquiries', 'webhooks', 'keys',
] as const
export type Resource = (typeof RESOURCES)[number]
export type Action = 'read' | 'write'

export interface RequiredScope {
  resource: Resource
  action: Action
}

const SCOPE = new RegExp(`^(\\*|(${RESOURCES.join('|')}):(read|write|\\*))$`)

export function isValidScope(scope: string): boolean {
  return SCOPE.test(scope)
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
