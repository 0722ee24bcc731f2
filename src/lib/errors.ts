// What a service throws when a request cannot be done as asked: the kind of failure in the
// domain's terms and a message for the caller, never an HTTP status. http/errors.ts maps each
// kind to its status and the contract's error code (CONTRACT §4), in one place; the CLI shows
// the message. Anything else thrown is a fault (a 500).

/** One problem with an input: the field's path (`items[1].quantity`; '' for the whole) and what is wrong. */
export interface ErrorDetail {
  path: string
  message: string
}

/** An expected failure of a service. */
export class DomainError extends Error {
  readonly details?: ErrorDetail[]

  constructor(message: string, details?: ErrorDetail[]) {
    super(message)
    this.details = details
  }
}

/** No such record for this tenant (another tenant's record is not found either). */
export class NotFoundError extends DomainError {}

/** The record's state, or a rule about the tenant's records, forbids the change now. */
export class ConflictError extends DomainError {}

/** Fields break a rule: `details` lists every problem; the message names the first. */
export class InvalidError extends DomainError {
  constructor(details: ErrorDetail[]) {
    super(_firstProblem(details), details)
  }
}

/** The request as a whole asks for something that cannot be answered (a range the wrong way round, too long). */
export class BadInputError extends DomainError {}

/** The caller holds as much of something as it may (event streams): it may try again after `retryAfterS`. */
export class TooManyError extends DomainError {
  readonly retryAfterS: number

  constructor(message: string, retryAfterS: number) {
    super(message)
    this.retryAfterS = retryAfterS
  }
}

/** The caller is known but may not do this. */
export class ForbiddenError extends DomainError {}

/** The caller's credentials do not (or no longer) hold. */
export class UnauthenticatedError extends DomainError {}

function _firstProblem(details: readonly ErrorDetail[]): string {
  const first = details[0]
  const message = first ? `${first.path ? first.path + ': ' : ''}${first.message}` : 'Validation failed'
  return details.length > 1 ? `${message} (and ${details.length - 1} more)` : message
}
