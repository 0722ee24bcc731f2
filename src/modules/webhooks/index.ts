export { webhookRoutes } from './routes.ts'
