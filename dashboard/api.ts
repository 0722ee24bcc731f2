import { FetchError, ofetch } from 'ofetch'
import type { Page } from './types.ts'

/** An error answer of the API, in the contract's shape, or a network failure (status 0). */
export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly details: { path: string; message: string }[]

  constructor(status: number, code: string, message: string, details: { path: string; message: string }[] = []) {
    super(message)
    this.status = status
    this.code = code
    this.details = details
  }
}

let _tenant: string | null = null
let _onSignedOut: () => void = () => {}

/** The tenant the operator works on (sent as X-Travelops-Tenant); a tenant session's own otherwise. */
export const setTenant = (id: string | null) => void (_tenant = id)
export const onSignedOut = (fn: () => void) => void (_onSignedOut = fn)

const client = ofetch.create({ retry: 0, credentials: 'same-origin', timeout: 20_000 })

/**
 * One call of the API with the session cookie. Every call carries X-Requested-With: the
 * server refuses a session request without it, which no other site can add without a
 * preflight that the server does not allow.
 */
export async function api<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, o: { body?: unknown; query?: Record<string, string | undefined> } = {}): Promise<T> {
  const headers: Record<string, string> = { 'x-requested-with': 'travelops-dashboard', accept: 'application/json' }
  if (_tenant) headers['x-travelops-tenant'] = _tenant
  const query = o.query ? Object.fromEntries(Object.entries(o.query).filter(([, v]) => v !== undefined && v !== '')) : undefined
  try {
    return await client<T>(path, { method, headers, query, body: o.body as Record<string, unknown> | undefined })
  } catch (err) {
    if (err instanceof FetchError) {
      const e = (err.data as { error?: { code: string; message: string; details?: { path: string; message: string }[] } } | undefined)?.error
      const status = err.status ?? 0
      if (status === 401 && !path.startsWith('/v1/dashboard/sessions')) _onSignedOut()
      throw new ApiError(status, e?.code ?? 'network_error', e?.message ?? (status ? `The server answered ${status}` : 'The server could not be reached; check your connection'), e?.details)
    }
    throw err
  }
}

/**
 * GET of a Server-Sent Events route with the same headers as api(): the answer's body to read, or
 * an ApiError. (EventSource cannot send X-Requested-With, which the server requires of a session.)
 * `lastEventId` resumes, as EventSource's own reconnection would.
 */
export async function openStream(path: string, o: { query?: Record<string, string | undefined>; lastEventId?: string; signal: AbortSignal }): Promise<ReadableStream<Uint8Array>> {
  const headers: Record<string, string> = { 'x-requested-with': 'travelops-dashboard', accept: 'text/event-stream' }
  if (_tenant) headers['x-travelops-tenant'] = _tenant
  if (o.lastEventId) headers['last-event-id'] = o.lastEventId
  const query = new URLSearchParams(Object.entries(o.query ?? {}).filter((e): e is [string, string] => !!e[1])).toString()
  let res: Response
  try {
    res = await fetch(query ? `${path}?${query}` : path, { headers, credentials: 'same-origin', cache: 'no-store', signal: o.signal })
  } catch (err) {
    if (o.signal.aborted) throw err
    throw new ApiError(0, 'network_error', 'The server could not be reached; check your connection')
  }
  if (res.ok && res.body) return res.body
  const e = ((await res.json().catch(() => undefined)) as { error?: { code: string; message: string; details?: { path: string; message: string }[] } } | undefined)?.error
  if (res.status === 401) _onSignedOut()
  throw new ApiError(res.status, e?.code ?? 'http_error', e?.message ?? `The server answered ${res.status}`, e?.details)
}

export const get = <T>(path: string, query?: Record<string, string | undefined>) => api<{ data: T }>('GET', path, { query }).then((r) => r.data)
export const list = <T>(path: string, query?: Record<string, string | undefined>) => api<Page<T>>('GET', path, { query })
export const post = <T>(path: string, body: unknown = {}) => api<{ data: T }>('POST', path, { body }).then((r) => r.data)
export const patch = <T>(path: string, body: unknown) => api<{ data: T }>('PATCH', path, { body }).then((r) => r.data)
export const del = <T>(path: string) => api<{ data: T }>('DELETE', path).then((r) => r.data)

/** A readable message for any error, with the API's field details. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.details.length ? `${err.message}: ${err.details.map((d) => `${d.path} ${d.message}`).join('; ')}` : err.message
  return err instanceof Error ? err.message : String(err)
}
