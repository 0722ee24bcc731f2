import type { AppDeps } from './context.ts'
import type { RouteDef } from './http/define-route.ts'
import { withOpenApi } from './http/openapi-route.ts'
import { systemRoutes } from './http/system-routes.ts'
import { orderRoutes } from './modules/orders/index.ts'
import { webhookRoutes } from './modules/webhooks/index.ts'

/**
 * Every route of the API. A module adds its routes here and nowhere else; `withOpenApi`
 * appends `GET /v1/openapi.json`, whose document covers the whole list.
 */
export function allRoutes(_deps: AppDeps): RouteDef[] {
  return withOpenApi([
    ...systemRoutes,
    ...orderRoutes,
    ...webhookRoutes,
  ])
}
