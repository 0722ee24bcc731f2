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
