import { defineRoute, type RouteDef } from '../../http/define-route.ts'
import { toPage } from '../../http/pagination.ts'
import { CreateItineraryBody, ITINERARY_READ_ONLY, ItineraryView, ListItinerariesQuery, UpdateItineraryBody } from './schema.ts'
import * as itineraries from './service.ts'

const read = { resource: 'itineraries', action: 'read' } as const
const write = { resource: 'itineraries', action: 'write' } as const
const tag = 'Itineraries'
const params = { id: 'iti' } as const

export const itineraryRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET', path: '/v1/itineraries', scope: read, tag, summary: 'List itineraries, newest first', list: true, query: ListItinerariesQuery,
    response: ItineraryView,
    handler: async ({ ctx, query }) => toPage(await itineraries.listItineraries(ctx, query), query.limit, itineraries.toItinerary, itineraries.itineraryJson),
  }),
  defineRoute({
    method: 'POST', path: '/v1/itineraries', scope: write, tag, summary: 'Create an itinerary', status: 201,
    rules: ['`endDate` before `startDate` (422)', 'a `days[].day` past the number of days from `startDate` to `endDate` (422)', 'a `days[].date` outside `startDate`…`endDate` (422)', 'a `days[].day` listed twice (422)'],
    body: CreateItineraryBody, readOnly: ITINERARY_READ_ONLY, events: ['itinerary.created'],
    response: ItineraryView,
    handler: ({ ctx, body }) => itineraries.createItinerary(ctx, body),
  }),
  defineRoute({
    method: 'GET', path: '/v1/itineraries/:id', scope: read, tag, summary: 'Read an itinerary', params,
    response: ItineraryView,
    handler: ({ ctx, params }) => itineraries.getItinerary(ctx, params.id!),
  }),
  defineRoute({
    method: 'PATCH', path: '/v1/itineraries/:id', scope: write, tag, summary: 'Update an itinerary', params,
    rules: ['`endDate` before `startDate` (422; the stored dates count where not sent)', 'a `days[].day` past the number of days from `startDate` to `endDate` (422)', 'a `days[].date` outside `startDate`…`endDate` (422)', 'a `days[].day` listed twice (422)'],
    body: UpdateItineraryBody, readOnly: ITINERARY_READ_ONLY,
    response: ItineraryView,
    handler: ({ ctx, params, body }) => itineraries.updateItinerary(ctx, params.id!, body),
  }),
  defineRoute({
    method: 'DELETE', path: '/v1/itineraries/:id', scope: write, tag, summary: 'Delete an itinerary', params,
    handler: ({ ctx, params }) => itineraries.deleteItinerary(ctx, params.id!),
  }),
]
