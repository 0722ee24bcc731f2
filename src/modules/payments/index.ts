export { paymentRoutes } from './routes.ts'
export { toPayment } from './service.ts'
export { PaymentView } from './schema.ts'
export type { Payment } from './schema.ts'
