export { productRoutes } from './routes.ts'
export { toProduct } from './service.ts'
export type { Product } from './schema.ts'
