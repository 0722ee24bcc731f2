export { orderRoutes } from './routes.ts'
export { toOrder } from './service.ts'
export { OrderView } from './schema.ts'
export type { Order } from './schema.ts'
