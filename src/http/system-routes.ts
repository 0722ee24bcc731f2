import * as v from 'valibot'
import { defineRoute, type RouteDef } from './define-route.ts'
import { ApiError } from './errors.ts'

/** Routes without authentication. */
export const systemRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET', path: '/health', scope: 'public', tag: 'System', summary: 'Liveness: the database answers', raw: true,
    response: v.object({ status: v.literal('ok') }),
    handler: async ({ ctx }) => {
      try {
        await ctx.engine.ping()
      } catch {
        throw new ApiError(503, 'unavailable', 'Database is not reachable')
      }
      return { status: 'ok' as const }
    },
  }),
]
