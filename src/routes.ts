import type { AppDeps } from './context.ts'
import type { RouteDef } from './http/define-route.ts'
import { withOpenApi } from './http/openapi-route.ts'
import { systemRoutes } from './http/system-routes.ts'
import { contentRoutes } from './modules/content/index.ts'
import { customerRoutes } from './modules/customers/index.ts'
import { inquiryRoutes } from './modules/inquiries/index.ts'
import { invoiceRoutes } from './modules/invoices/index.ts'
import { itineraryRoutes } from './modules/itineraries/index.ts'
import { orderRoutes } from './modules/orders/index.ts'
import { paymentRoutes } from './modules/payments/index.ts'
import { productRoutes } from './modules/products/index.ts'
import { supplierRoutes } from './modules/suppliers/index.ts'
import { keyRoutes } from './modules/keys/index.ts'
import { EventView, exampleData, webhookRoutes } from './modules/webhooks/index.ts'
import { dashboardRoutes } from './modules/dashboard/index.ts'
import { eventRoutes } from './modules/events/index.ts'

/**
 * Every route of the API. A module adds its routes here and nowhere else; `withOpenApi`
 * appends `GET /v1/openapi.json`, whose document covers the whole list.
 */
export function allRoutes(_deps: AppDeps): RouteDef[] {
  const all: RouteDef[] = withOpenApi([
    ...systemRoutes,
    ...keyRoutes,
    ...orderRoutes,
    ...customerRoutes,
    ...productRoutes,
    ...itineraryRoutes,
    ...invoiceRoutes,
    ...paymentRoutes,
    ...supplierRoutes,
    ...inquiryRoutes,
    ...contentRoutes,
    ...webhookRoutes(() => all),
    ...eventRoutes,
    ...dashboardRoutes,
  ], WEBHOOK_EVENTS)
  return all
}

/** The events the OpenAPI document describes under `webhooks`: their schema and example records. */
export const WEBHOOK_EVENTS = { schema: EventView, example: exampleData }
