import { defineRoute, type RouteDef } from '../../http/define-route.ts'
import { toPage } from '../../http/pagination.ts'
import { createLink, createTenantSummary, currentSession, getTenantSummary, listTenantSummaries, signIn, signOut, toTenantSummary } from './api.ts'
import { CreateLinkBody, CreateTenantBody, LinkView, SessionView, SignInBody, TenantSummaryView } from './schema.ts'

const tag = 'Dashboard'

/** Signing in to the dashboard, and the operator's tenant endpoints it uses (CONTRACT §14). */
export const dashboardRoutes: RouteDef[] = [
  defineRoute({
    method: 'POST', path: '/v1/dashboard/links', scope: 'all', tag, summary: 'A one-time sign-in link to the dashboard for this key\'s tenant', status: 201,
    description: 'For a tenant\'s own back office: sends its staff into the dashboard, seeing this tenant only. The link (at the server\'s `--public-url` when set, else its address '
      + 'as the request reached it, `X-Forwarded-Proto` honoured) works once and expires after `expires_in` (default 15m, from 1s to 7d; never past the key\'s own expiry); the session it opens lasts 12 h.',
    body: CreateLinkBody,
    response: LinkView,
    handler: ({ ctx, body, request }) => createLink(ctx, body, ctx.config.publicUrl ?? request.origin),
  }),
  defineRoute({
    method: 'POST', path: '/v1/dashboard/sessions', scope: 'public', tag, summary: 'Sign in with a link\'s token: opens a dashboard session', status: 201,
    description: 'Trades the token of a sign-in link (the part after `#`) for a session of 12 h, set as the HttpOnly, SameSite=Strict cookie `travelops_session`. '
      + 'A link works once: a used, expired or unknown token answers 401 saying which.',
    body: SignInBody,
    response: SessionView,
    handler: ({ ctx, body, request, responseHeaders }) => signIn(ctx, body.token, request.secure, responseHeaders),
  }),
  defineRoute({
    method: 'GET', path: '/v1/dashboard/session', scope: 'session', tag, summary: 'The signed-in dashboard session: role and tenant',
    response: SessionView,
    handler: ({ ctx }) => currentSession(ctx),
  }),
  defineRoute({
    method: 'DELETE', path: '/v1/dashboard/session', scope: 'session', tag, summary: 'Sign out: ends the session on the server and clears its cookie',
    response: SessionView,
    handler: ({ ctx, request, responseHeaders }) => signOut(ctx, request.secure, responseHeaders),
  }),
  defineRoute({
    method: 'GET', path: '/v1/admin/tenants', scope: 'operator', tag, summary: 'List every tenant with key and subscription counts', list: true,
    response: TenantSummaryView,
    handler: async ({ ctx, query }) => toPage(await listTenantSummaries(ctx, query), query.limit, toTenantSummary),
  }),
  defineRoute({
    method: 'POST', path: '/v1/admin/tenants', scope: 'operator', tag, summary: 'Create a tenant', status: 201,
    body: CreateTenantBody,
    response: TenantSummaryView,
    handler: ({ ctx, body }) => createTenantSummary(ctx, body.name),
  }),
  defineRoute({
    method: 'GET', path: '/v1/admin/tenants/:id', scope: 'operator', tag, summary: 'Read a tenant with its counts', params: { id: 'ten' },
    response: TenantSummaryView,
    handler: ({ ctx, params }) => getTenantSummary(ctx, params.id!),
  }),
]

