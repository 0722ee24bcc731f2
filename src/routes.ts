import type { AppDeps } from './context.ts'
import type { RouteDef } from './http/define-route.ts'
import { systemRoutes } from './http/system-routes.ts'
import { invoiceRoutes } from './modules/invoices/index.ts'
import { itineraryRoutes } from './modules/itineraries/index.ts'
import { orderRoutes } from './modules/orders/index.ts'
import { paymentRoutes } from './modules/payments/index.ts'

/** Every route of the API. A module adds its routes here and nowhere else. */
export function allRoutes(_deps: AppDeps): RouteDef[] {
  return [
    ...systemRoutes,
    ...orderRoutes,
    ...itineraryRoutes,
    ...invoiceRoutes,
    ...paymentRoutes,
  ]
}
