export { contentRoutes } from './routes.ts'
export { toContent } from './service.ts'
export type { Content } from './schema.ts'
