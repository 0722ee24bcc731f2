export { supplierRoutes } from './routes.ts'
export { toSupplier } from './service.ts'
export type { Supplier } from './schema.ts'
