import type { RouteDef } from './define-route.ts'
import { READ_ONLY_RESOURCES, scopeName } from '../lib/scopes.ts'

/**
 * The prose of the OpenAPI document: tag descriptions, `info.license` (no `info.contact`),
 * `servers`, and each operation's `description`. A tag missing here has no description, which
 * the linters in test/api/openapi-lint.test.ts report.
 */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  System: 'Health check and this document; no API key needed.',
  Orders: 'Bookings: line items, totals in major units, and the pending → confirmed → cancelled lifecycle.',
  Customers: 'The people who book: contact details and an address.',
  Products: 'What is sold: tours, cruises, transfers, with a price and capacity.',
  Itineraries: 'Day-by-day plans, optionally tied to an order and a customer.',
  Invoices: 'Invoices for orders: open → paid or void; payments settle them.',
  Payments: 'Money received against orders and invoices, and refunds.',
  Suppliers: 'The operators and partners behind products.',
  Inquiries: 'Requests from prospective travellers, with a status.',
  Content: 'Free-form content records of a named type (pages, destinations, FAQs).',
  Webhooks: 'Subscriptions to events, the delivery records with every attempt, test events and delivery statistics.',
  'API keys': 'API keys of the tenant: create (the secret is shown once), list, read, revoke.',
  Dashboard: 'The administration dashboard (served at /dashboard): one-time sign-in links, its session, and the operator\'s tenant endpoints.',
  Events: 'The tenant\'s events, read over the API (scope `events:read`) and sent to webhook receivers (the `webhooks` section of this document): one POST per event and subscription, with the envelope the API shows.',
}

/** No contact: the project has no support address to name, and a placeholder would mislead. */
export const INFO_CONTACT = undefined

/** The LICENSE file's, by its SPDX identifier (OpenAPI 3.1 takes `identifier` or `url`, not both). */
export const INFO_LICENSE = { name: 'MIT', identifier: 'MIT' }

export const SERVERS = [{
  url: '{origin}',
  description: 'Your travelops serve; the default is a local one on port 3000',
  variables: { origin: { default: 'http://localhost:3000', description: 'Scheme, host and port of the serve, without a trailing slash' } },
}]

/** `description` of an operation: the route's own prose, then what its definition says (scope, paging, idempotency, events). */
export function operationDescription(route: RouteDef): string {
  const parts: string[] = [route.description ?? `${route.summary}.`]
  if (route.rules?.length) parts.push(`Also refused, as JSON Schema cannot say it: ${route.rules.join('; ')}.`)
  if (route.scope === 'public') parts.push('No API key needed.')
  else if (route.scope === 'all') parts.push('Needs a key with the scope `*`.')
  else if (route.scope === 'session') parts.push('Only for a signed-in dashboard browser (its session cookie); an API key is refused with 403.')
  else if (route.scope === 'operator') parts.push('Only for the operator\'s dashboard session (a link from `travelops dashboard link` without `--tenant`); an API key is refused with 403.')
  else {
    const { resource, action } = route.scope
    const wider = READ_ONLY_RESOURCES.includes(resource) ? '' : `${action === 'read' ? `\`${resource}:write\`, ` : ''}\`${resource}:*\`, `
    parts.push(`Needs the scope \`${scopeName(route.scope)}\` (or ${wider}\`*\`).`)
  }
  if (route.list) {
    parts.push('Paginated: `limit` (1–100, default 20) and `cursor`; a page also ends before it would pass 4 MiB of JSON, and a filtered page that has looked at '
      + '100,000 records without filling up ends with what it found (possibly nothing) and `has_more: true`: follow `next_cursor`.')
  }
  if (route.method === 'POST') parts.push('Safe to retry with an `Idempotency-Key`.')
  if (route.events?.length) {
    const names = route.events.map((e) => `\`${e}\``).join(', ')
    parts.push(`${route.method === 'POST' && route.events.length === 1 ? 'Emits' : 'May emit'} ${names} when it changes something (see the \`webhooks\` section).`)
  }
  return parts.join(' ')
}
