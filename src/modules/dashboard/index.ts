export { dashboardRoutes } from './routes.ts'
export {
  endSession, findSession, issueLink, LINK_TTL_MS, linkUrl, pruneSignIns, redeemLink, revokeSessions, SESSION_COOKIE, SESSION_TTL_MS,
  type IssuedLink, type Redeemed, type Role,
} from './sessions.ts'
export type { SessionInfo, TenantSummary } from './schema.ts'
