export { inquiryRoutes } from './routes.ts'
export { toInquiry } from './service.ts'
export { InquiryView } from './schema.ts'
export type { Inquiry } from './schema.ts'
