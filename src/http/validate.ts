import * as v from 'valibot'
import { formatPath, issuesToDetails, validationFailed, type ErrorDetail } from './errors.ts'

/**
 * Validates a body against a valibot schema and lists EVERY problem: valibot stops at the
 * first unknown key of an object, so unknown keys are found by walking the schema here.
 */
export function validateBody<S extends v.GenericSchema>(schema: S, value: unknown, readOnly: ReadonlySet<string> = new Set()): v.InferOutput<S> {
  // valibot's object and record schemas take an array for an object (`[]` passes as `{}`),
  // and records silently drop the keys `__proto__`, `prototype` and `constructor`.
  const shape: ErrorDetail[] = []
  _shapeProblems(schema, value, [], shape)
  const r = v.safeParse(schema, value, { abortEarly: false })
  if (r.success && shape.length === 0) return r.output
  const issues = r.success ? [] : r.issues.filter((i) => !(i.type === 'strict_object' && i.expected === 'never'))
  const details: ErrorDetail[] = [...issuesToDetails(issues, readOnly)]
  for (const keys of _unknownKeys(schema, value, [])) {
    const field = String(keys[keys.length - 1])
    details.push({ path: formatPath(keys), message: readOnly.has(field) ? `'${field}' is read-only` : `unknown field '${field}'` })
  }
  details.push(...shape)
  throw validationFailed(details.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)))
}

type AnySchema = { type: string; entries?: Record<string, AnySchema>; wrapped?: AnySchema; item?: AnySchema; value?: AnySchema }

const WRAPPERS = new Set(['optional', 'nullable', 'nullish', 'exact_optional', 'non_optional', 'non_nullable'])

/** Keys a valibot record drops without a word; a client's pair must be stored or refused. */
const DROPPED_KEYS = new Set(['__proto__', 'prototype', 'constructor'])

/**
 * An array where the schema has an object or a record, and record keys valibot would drop,
 * added to `out`. `at` is the path so far, extended and restored in place: nothing is
 * allocated for a body without such a problem (it runs on every body).
 */
function _shapeProblems(schema: AnySchema, value: unknown, at: (string | number)[], out: ErrorDetail[]): void {
  if (value === null || typeof value !== 'object') return
  if (WRAPPERS.has(schema.type)) {
    if (schema.wrapped) _shapeProblems(schema.wrapped, value, at, out)
    return
  }
  if (schema.type === 'array') {
    if (!Array.isArray(value) || !schema.item) return
    for (let i = 0; i < value.length; i++) {
      at.push(i)
      _shapeProblems(schema.item, value[i], at, out)
      at.pop()
    }
    return
  }
  if (schema.type !== 'strict_object' && schema.type !== 'record') return
  if (Array.isArray(value)) {
    out.push({ path: formatPath(at), message: 'expected Object but received Array' })
    return
  }
  const o = value as Record<string, unknown>
  for (const k in o) {
    at.push(k)
    if (schema.type === 'record' && DROPPED_KEYS.has(k)) out.push({ path: formatPath(at), message: `the key '${k}' is not allowed` })
    const entry = schema.type === 'record' ? schema.value : _entry(schema, k)
    if (entry) _shapeProblems(entry, o[k], at, out)
    at.pop()
  }
}

/** The schema of an object's own entry `k` (never an Object.prototype member such as `constructor`). */
const _entry = (schema: AnySchema, k: string) => (schema.entries && Object.hasOwn(schema.entries, k) ? schema.entries[k] : undefined)

function _unknownKeys(schema: AnySchema, value: unknown, at: (string | number)[]): (string | number)[][] {
  if (value === null || value === undefined) return []
  switch (schema.type) {
    case 'optional': case 'nullable': case 'nullish': case 'exact_optional': case 'non_optional': case 'non_nullable':
      return schema.wrapped ? _unknownKeys(schema.wrapped, value, at) : []
    case 'array':
      return Array.isArray(value) && schema.item ? value.flatMap((item, i) => _unknownKeys(schema.item!, item, [...at, i])) : []
    case 'strict_object': {
      if (typeof value !== 'object' || Array.isArray(value) || !schema.entries) return []
      const out: (string | number)[][] = []
      for (const [k, val] of Object.entries(value)) {
        const entry = _entry(schema, k)
        if (!entry) out.push([...at, k])
        else out.push(..._unknownKeys(entry, val, [...at, k]))
      }
      return out
    }
    default:
      return []
  }
}
