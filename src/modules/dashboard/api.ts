import type { TenantContext } from '../../context.ts'
import type { DashboardSessionRow } from '../../db/schema.ts'
import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../../lib/errors.ts'
import { LINK_LIFETIME, parseDuration } from '../../lib/duration.ts'
import { createTenant, findTenant } from '../tenants/index.ts'
import type { SessionInfo, TenantSummary } from './schema.ts'
import { endSession, issueLink, linkUrl, LINK_TTL_MS, redeemLink, SESSION_COOKIE, SESSION_TTL_MS } from './sessions.ts'

function _on(ctx: TenantContext): void {
  if (!ctx.config.dashboard) throw new NotFoundError('The dashboard is turned off on this server (--no-dashboard)')
}

/**
 * POST /v1/dashboard/links: a sign-in link for the key's own tenant, at this server's address.
 * The link and its session are the calling key's (for a session, its key's): they end with it,
 * and a link may not outlive it (403; the default 15 min stops at the key's expiry).
 */
export async function createLink(ctx: TenantContext, body: { expires_in?: string } | undefined, origin: string) {
  _on(ctx)
  const now = ctx.clock.now()
  const keyEnds = ctx.bounds?.expires_at ? Date.parse(ctx.bounds.expires_at) - now.getTime() : Infinity
  let ttl = Math.min(LINK_TTL_MS, keyEnds)
  if (body?.expires_in) {
    ttl = parseDuration(body.expires_in, LINK_LIFETIME)!
    if (ttl > keyEnds) throw new ForbiddenError(`This API key cannot make a link that expires in ${body.expires_in}: it expires at ${ctx.bounds!.expires_at}, and a link may not outlive the key that made it`)
  }
  const link = await issueLink(ctx.db, ctx.tenantId, ttl, now, ctx.bounds?.id ?? null)
  return { url: linkUrl(origin, link.token), expires_at: link.expires_at }
}

const _cookie = (value: string, maxAge: number, secure: boolean) =>
  `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? '; Secure' : ''}`

const REFUSED = {
  unknown: 'This sign-in link is not valid; ask for a new one (travelops dashboard link)',
  used: 'This sign-in link has already been used; a link works once: ask for a new one',
  expired: 'This sign-in link has expired; ask for a new one',
  key: 'The API key that made this sign-in link has been revoked or has expired; ask for a new one',
} as const

/** POST /v1/dashboard/sessions: trades a link's token for the session cookie. */
export async function signIn(ctx: TenantContext, token: string, secure: boolean, headers: Record<string, string>): Promise<SessionInfo> {
  _on(ctx)
  const r = await redeemLink(ctx.engine, token, ctx.clock.now())
  if (!r.ok) throw new UnauthenticatedError(REFUSED[r.reason])
  headers['set-cookie'] = _cookie(r.token, SESSION_TTL_MS / 1000, secure)
  headers['cache-control'] = 'no-store'
  return _info(ctx, r.session)
}

export async function currentSession(ctx: TenantContext): Promise<SessionInfo> {
  const row = await ctx.db.selectFrom('dashboard_sessions').selectAll().where('id', '=', ctx.keyId).executeTakeFirstOrThrow()
  return _info(ctx, row)
}

/** DELETE /v1/dashboard/session: ends the session on the server and clears the cookie. */
export async function signOut(ctx: TenantContext, secure: boolean, headers: Record<string, string>): Promise<SessionInfo> {
  await endSession(ctx.db, ctx.keyId, ctx.clock.now())
  headers['set-cookie'] = _cookie('', 0, secure)
  return currentSession(ctx)
}

async function _info(ctx: TenantContext, row: DashboardSessionRow): Promise<SessionInfo> {
  const tenant = row.tenant_id ? await findTenant(ctx.db, row.tenant_id) : undefined
  return {
    id: row.id, role: row.role, tenant_id: row.tenant_id, tenant_name: tenant?.name ?? null,
    created_at: row.created_at, expires_at: row.expires_at, ended_at: row.ended_at,
  }
}

function _summaries(ctx: TenantContext) {
  return ctx.db.selectFrom('tenants as t').select(['t.id', 't.name', 't.created_at'])
    .select((eb) => [
      eb.selectFrom('api_keys as k').select(eb.fn.countAll<number>().as('n')).whereRef('k.tenant_id', '=', 't.id').where('k.revoked_at', 'is', null).as('keys'),
      eb.selectFrom('webhooks as w').select(eb.fn.countAll<number>().as('n')).whereRef('w.tenant_id', '=', 't.id').where('w.deleted_at', 'is', null).as('webhooks'),
      eb.selectFrom('webhooks as w').select(eb.fn.countAll<number>().as('n')).whereRef('w.tenant_id', '=', 't.id').where('w.deleted_at', 'is', null)
        .where((w) => w.or([w('w.disabled_at', 'is not', null), w.and([w('w.failing_since', 'is not', null), w('w.active', '=', 1)])])).as('webhooks_failing'),
    ])
}

export type SummaryRow = { id: string; name: string; created_at: string; keys: unknown; webhooks: unknown; webhooks_failing: unknown }
export const toTenantSummary = (r: SummaryRow): TenantSummary => ({
  id: r.id, name: r.name, created_at: r.created_at, keys: Number(r.keys ?? 0), webhooks: Number(r.webhooks ?? 0), webhooks_failing: Number(r.webhooks_failing ?? 0),
})

/** GET /v1/admin/tenants: every tenant, newest first, with counts (operator only). */
export function listTenantSummaries(ctx: TenantContext, q: { limit: number; cursor?: string }): Promise<SummaryRow[]> {
  let query = _summaries(ctx).orderBy('t.id', 'desc').limit(q.limit + 1)
  if (q.cursor) query = query.where('t.id', '<', q.cursor)
  return query.execute()
}

export async function getTenantSummary(ctx: TenantContext, id: string): Promise<TenantSummary> {
  const row = await _summaries(ctx).where('t.id', '=', id).executeTakeFirst()
  if (!row) throw new NotFoundError(`No tenant ${id}`)
  return toTenantSummary(row)
}

export async function createTenantSummary(ctx: TenantContext, name: string): Promise<TenantSummary> {
  const t = await createTenant(ctx.db, name, ctx.clock.now())
  ctx.logger.info('tenant created from the dashboard', { tenant_id: t.id, session_id: ctx.keyId })
  return getTenantSummary(ctx, t.id)
}


