import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ApiError, asApiError, validationFailed } from '../../src/http/errors.ts'
import {
  BadInputError, ConflictError, DomainError, ForbiddenError, InvalidError, NotFoundError, UnauthenticatedError,
} from '../../src/lib/errors.ts'

// The services throw domain errors (lib/errors.ts); http/errors.ts alone gives them their status
// and contract code (CONTRACT §4), with the message and details as the service wrote them.

test('each kind of domain error answers its status and code, message and details unchanged', () => {
  const details = [{ path: 'until', message: 'must be after since' }]
  const cases: [DomainError, number, string][] = [
    [new NotFoundError('No order ord_1'), 404, 'not_found'],
    [new ConflictError('Order ord_1 is already confirmed'), 409, 'conflict'],
    [new InvalidError([{ path: 'items[0].quantity', message: 'must be at least 1' }]), 422, 'validation_failed'],
    [new BadInputError('`until` must be after `since`', details), 400, 'bad_request'],
    [new ForbiddenError('This API key cannot grant the scope \'*\''), 403, 'forbidden'],
    [new UnauthenticatedError('This sign-in link has been used'), 401, 'unauthenticated'],
  ]
  for (const [err, status, code] of cases) {
    const api = asApiError(err)
    assert.ok(api instanceof ApiError)
    assert.deepEqual({ status: api.status, code: api.code, message: api.message, details: api.details }, { status, code, message: err.message, details: err.details })
  }
})

test('an invalid input names its first problem and counts the rest, as validationFailed does', () => {
  const details = [{ path: 'a', message: 'is required' }, { path: '', message: 'too many' }, { path: 'b[1]', message: 'x' }]
  assert.equal(new InvalidError(details).message, 'a: is required (and 2 more)')
  assert.equal(new InvalidError([{ path: '', message: 'too many' }]).message, 'too many')
  assert.equal(new InvalidError([]).message, 'Validation failed')
  assert.deepEqual(validationFailed(details), asApiError(new InvalidError(details)))
})

test('anything else is no expected failure: a bare DomainError and a plain Error are left to the 500 path', () => {
  assert.equal(asApiError(new DomainError('unmapped kind')), undefined)
  assert.equal(asApiError(new Error('boom')), undefined)
  const api = new ApiError(429, 'rate_limited', 'slow down')
  assert.equal(asApiError(api), api)
})
