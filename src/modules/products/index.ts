export { productRoutes } from './routes.ts'
export { toProduct } from './service.ts'
export { ProductView } from './schema.ts'
export type { Product } from './schema.ts'
