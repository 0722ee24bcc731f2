export { customerRoutes } from './routes.ts'
export { findCustomerContact, toCustomer } from './service.ts'
export { CustomerView } from './schema.ts'
export type { Customer, CustomerContact } from './schema.ts'
