export { itineraryRoutes } from './routes.ts'
export { toItinerary } from './service.ts'
export { ItineraryView } from './schema.ts'
export type { Itinerary } from './schema.ts'
