/**
 * JSON Schema keywords that state what a valibot `v.check` checks, for the OpenAPI document
 * (http/openapi-schema.ts merges them where the check stands). A check without them is said in
 * words (its message becomes the description); with them, a client and a validator know the rule.
 * Keep the keywords exactly as strict as the check: no more, no less.
 */
const _hints = new WeakMap<object, Record<string, unknown>>()

/** `action` (a `v.check(…)`), noted as meaning `json` in JSON Schema. */
export function documented<T extends object>(action: T, json: Record<string, unknown>): T {
  _hints.set(action, json)
  return action
}

/** The keywords `documented()` noted for `action`, if any. */
export const hintOf = (action: object): Record<string, unknown> | undefined => _hints.get(action)
