import type { BaseIssue } from 'valibot'
import {
  BadInputError, ConflictError, DomainError, ForbiddenError, InvalidError, NotFoundError, TooManyError, UnauthenticatedError, type ErrorDetail,
} from '../lib/errors.ts'

export type { ErrorDetail }

/** An expected failure with its HTTP status and contract error code. */
export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly details?: ErrorDetail[]
  readonly headers?: Record<string, string>

  constructor(status: number, code: string, message: string, details?: ErrorDetail[], headers?: Record<string, string>) {
    super(message)
    this.status = status
    this.code = code
    this.details = details
    this.headers = headers
  }
}

export const badRequest = (message: string, details?: ErrorDetail[]) => new ApiError(400, 'bad_request', message, details)
export const unauthenticated = (message: string) => new ApiError(401, 'unauthenticated', message)
export const forbidden = (message: string) => new ApiError(403, 'forbidden', message)
export const notFound = (message = 'No such resource') => new ApiError(404, 'not_found', message)
export const conflict = (message: string) => new ApiError(409, 'conflict', message)

/** 422 listing every problem; the message names the first. */
export const validationFailed = (details: ErrorDetail[]): ApiError => asApiError(new InvalidError(details))!

/**
 * The one map from the services' domain errors (lib/errors.ts) to HTTP: each kind's status and
 * contract code; the message and details stay as the service wrote them.
 */
const _HTTP: readonly (readonly [kind: abstract new (...args: never[]) => DomainError, status: number, code: string])[] = [
  [NotFoundError, 404, 'not_found'],
  [ConflictError, 409, 'conflict'],
  [InvalidError, 422, 'validation_failed'],
  [BadInputError, 400, 'bad_request'],
  [ForbiddenError, 403, 'forbidden'],
  [UnauthenticatedError, 401, 'unauthenticated'],
]

/** An expected failure as the API answers it: an ApiError as it is, a domain error mapped; undefined for anything else (a fault, a 500). */
export function asApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err
  if (err instanceof TooManyError) return new ApiError(429, 'rate_limited', err.message, undefined, { 'retry-after': String(err.retryAfterS) })
  if (err instanceof DomainError) for (const [kind, status, code] of _HTTP) if (err instanceof kind) return new ApiError(status, code, err.message, err.details)
  return undefined
}

/** `items[1].quantity`, `customer.email`: dots for properties, brackets for indexes. */
export function formatPath(keys: readonly (string | number)[]): string {
  let out = ''
  for (const k of keys) {
    if (typeof k === 'number') out += `[${k}]`
    else out += out ? `.${k}` : k
  }
  return out
}

/** valibot issues → contract details, with read-only and unknown fields said plainly. */
export function issuesToDetails(issues: readonly BaseIssue<unknown>[], readOnly: ReadonlySet<string> = new Set()): ErrorDetail[] {
  return issues.map((issue) => {
    const keys = (issue.path ?? []).map((p) => p.key as string | number)
    const path = formatPath(keys)
    const last = keys[keys.length - 1]
    if (issue.type === 'strict_object' && issue.expected === 'never') {
      const field = typeof last === 'string' ? last : ''
      return { path, message: readOnly.has(field) ? `'${field}' is read-only` : `unknown field '${field}'` }
    }
    return { path, message: _friendly(issue) }
  })
}

function _friendly(issue: BaseIssue<unknown>): string {
  if (issue.kind === 'schema' && issue.received === 'undefined') return 'is required'
  // valibot's default messages start with "Invalid type: " etc.; keep the informative part.
  return issue.message.replace(/^Invalid (type|value|length|key|format|\w+): /, '').replace(/^Expected/, 'expected')
}
