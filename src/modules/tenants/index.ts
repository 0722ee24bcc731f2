export { createTenant, findTenant, listTenants } from './service.ts'
