import * as v from 'valibot'
import { LINK_LIFETIME } from '../../lib/duration.ts'
import { Duration } from '../fields.ts'
import * as out from '../view-fields.ts'

/** POST /v1/dashboard/links: how long the link stays usable (default 15m, from 1s to 7d). */
export const CreateLinkBody = v.optional(v.strictObject({
  expires_in: v.optional(Duration(LINK_LIFETIME, 'How long the link stays usable; default 15m')),
}))

export const SignInBody = v.strictObject({
  token: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(200, 'is not a sign-in token'),
    v.description('The part of the sign-in link after `#`')),
})

export const CreateTenantBody = v.strictObject({
  name: v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(200, 'must be at most 200 characters')),
})

export const LinkView = v.pipe(
  v.strictObject({
    url: v.pipe(v.string(), v.url(), v.description('Open it in a browser; it works once')),
    expires_at: out.Timestamp,
  }),
  v.title('DashboardLink'),
  v.description('A one-time sign-in link to the dashboard for the key\'s tenant'),
)

export const SessionView = v.pipe(
  v.strictObject({
    id: out.id('ses'),
    role: v.pipe(v.picklist(['operator', 'tenant']), v.description('`operator`: every tenant and the tenants page; `tenant`: one tenant')),
    tenant_id: out.ref('ten', 'The tenant of a tenant session; `null` for the operator'),
    tenant_name: v.nullable(v.string()),
    created_at: out.createdAt,
    expires_at: out.Timestamp,
    ended_at: out.optionalTimestamp('When the session was signed out or revoked; `null` while it lasts'),
  }),
  v.title('DashboardSession'),
)

export const TenantSummaryView = v.pipe(
  v.strictObject({
    id: out.id('ten'),
    name: v.string(),
    created_at: out.createdAt,
    keys: v.pipe(out.Int(0), v.description('API keys not revoked')),
    webhooks: v.pipe(out.Int(0), v.description('Webhook subscriptions (not deleted)')),
    webhooks_failing: v.pipe(out.Int(0), v.description('Subscriptions whose latest attempts are failing, or disabled by the worker')),
  }),
  v.title('TenantSummary'),
  v.description('A tenant with its key and subscription counts (operator only)'),
)

export type SessionInfo = v.InferOutput<typeof SessionView>
export type TenantSummary = v.InferOutput<typeof TenantSummaryView>
