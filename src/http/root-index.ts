import type { AppDeps } from '../context.ts'
import { VERSION } from '../version.ts'

/**
 * `GET /` (CONTRACT §16): where to go from the server's address — the OpenAPI document, the
 * API reference page, the dashboard (when it is on) and the liveness check. Paths, not URLs:
 * they hold behind any proxy that keeps the path.
 */
export function rootIndex(deps: AppDeps): string {
  const links: Record<string, string> = { openapi: '/v1/openapi.json', docs: '/docs' }
  if (deps.config.dashboard) links.dashboard = '/dashboard'
  links.health = '/health'
  return JSON.stringify({ name: 'travelops', version: VERSION, links })
}
