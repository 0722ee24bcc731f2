export { inquiryRoutes } from './routes.ts'
export { toInquiry } from './service.ts'
export type { Inquiry } from './schema.ts'
