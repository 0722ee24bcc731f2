import type { AppDeps } from './context.ts'
import type { RouteDef } from './http/define-route.ts'
import { systemRoutes } from './http/system-routes.ts'
import { contentRoutes } from './modules/content/index.ts'
import { customerRoutes } from './modules/customers/index.ts'
import { inquiryRoutes } from './modules/inquiries/index.ts'
import { orderRoutes } from './modules/orders/index.ts'
import { productRoutes } from './modules/products/index.ts'
import { supplierRoutes } from './modules/suppliers/index.ts'

/** Every route of the API. A module adds its routes here and nowhere else. */
export function allRoutes(_deps: AppDeps): RouteDef[] {
  return [
    ...systemRoutes,
    ...orderRoutes,
    ...customerRoutes,
    ...productRoutes,
    ...supplierRoutes,
    ...inquiryRoutes,
    ...contentRoutes,
  ]
}
