import * as v from 'valibot'
import type { TenantContext } from '../context.ts'
import type { EventName } from '../events/catalog.ts'
import type { IdPrefix } from '../lib/ids.ts'
import type { JsonStream } from '../lib/json-stream.ts'
import { pageQuery, type Page } from './pagination.ts'
import type { Rendered } from '../lib/rendered.ts'
import type { RouteScope } from '../lib/scopes.ts'

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

type BodyOf<S> = S extends v.GenericSchema ? v.InferOutput<S> : undefined
type QueryOf<Q extends v.ObjectEntries, L> = v.InferOutput<v.StrictObjectSchema<L extends true ? Q & typeof pageQuery : Q, undefined>>
/**
 * What the handler must return when the route declares `response`: that schema's output (a page of it for lists),
 * for a single record too large to build whole a JsonStream of it (json-stream.ts), or the record already
 * rendered as JSON (rendered.ts).
 */
type ResultOf<R, L> = R extends v.GenericSchema
  ? (L extends true ? Page<v.InferOutput<R>> : v.InferOutput<R> | JsonStream | Rendered<v.InferOutput<R>>)
  : unknown

export interface RouteInput<B, Q> {
  ctx: TenantContext
  params: Record<string, string>
  query: Q
  body: B
  /** Where the request came to: its origin (scheme from X-Forwarded-Proto behind a proxy) and whether it is HTTPS. */
  request: { origin: string; secure: boolean }
  /** Headers to add to the answer (the dashboard's session cookie). */
  responseHeaders: Record<string, string>
  /** The request's headers (Last-Event-ID). */
  headers: Headers
}

/**
 * A route as data: method, path, the scope it needs, how its parameters, query and body
 * are validated, and its handler. The app mounts these; the global guard reads `scope`
 * before the handler runs, and the OpenAPI document is generated from the same objects.
 */
export interface RouteDef {
  method: Method
  path: string
  /** The scope a key needs, or 'public' for the few routes without authentication (see RouteScope). */
  scope: RouteScope
  summary: string
  /** Prose for the OpenAPI operation's `description`, before what the definition says itself (scope, paging, events); the summary when absent. */
  description?: string
  /**
   * What the server also refuses that JSON Schema cannot state (one field against another, a
   * sum): each a sentence for the OpenAPI document, which lists them in the operation's description.
   */
  rules?: readonly string[]
  tag: string
  /** Path parameters that are ids: a malformed id answers 404 like an unknown one. */
  params?: Record<string, IdPrefix | { pattern: RegExp; description: string }>
  body?: v.GenericSchema
  /** Field names the 422 message calls read-only rather than unknown. */
  readOnly?: readonly string[]
  query?: v.ObjectEntries
  list?: boolean
  /** The handler's result is the whole body (health, OpenAPI), not wrapped in `data`. */
  raw?: boolean
  /** The handler answers Server-Sent Events (an EventStreamBody, lib/event-stream-body.ts): what each message carries, for the OpenAPI document. */
  eventStream?: string
  status?: number
  events?: readonly EventName[]
  /**
   * Schema of `data` in the response (of each item for lists; of the whole body for `raw`), for
   * the OpenAPI document; `defineRoute` type-checks the handler's result against it. A schema
   * named with `v.title('Order')` becomes `#/components/schemas/Order`.
   */
  response?: v.GenericSchema
  /**
   * Fields of `data` shown once and never stored (the full secret of a new API key): the
   * response an Idempotency-Key keeps for its replay has them `null`.
   */
  secretFields?: readonly string[]
  handler: (input: RouteInput<any, any>) => Promise<unknown>
}

export function defineRoute<
  S extends v.GenericSchema | undefined = undefined,
  Q extends v.ObjectEntries = {},
  L extends boolean | undefined = undefined,
  R extends v.GenericSchema | undefined = undefined,
>(def: Omit<RouteDef, 'body' | 'query' | 'list' | 'response' | 'handler'> & {
  body?: S
  query?: Q
  list?: L
  response?: R
  handler: (input: RouteInput<BodyOf<S>, QueryOf<Q, L>>) => Promise<ResultOf<R, L>>
}): RouteDef {
  return def as RouteDef
}

/** Body of an action route: nothing, or `{}`. */
export const EmptyBody = v.optional(v.strictObject({}))
