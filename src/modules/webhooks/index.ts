export { webhookRoutes } from './routes.ts'
export { EventView, type EventBody } from './event-view.ts'
export { exampleData } from './event-examples.ts'
export {
  findWebhookAnyTenant, getDeliveryAnyTenant, listDeliveriesAnyTenant, retryDeliveriesAnyTenant, type OperatorDeliveryFilter, type RetryReport,
} from './operator.ts'
export type { Delivery, DeliveryDetail } from './schema.ts'
