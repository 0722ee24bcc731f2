import * as v from 'valibot'
import { formatPath, issuesToDetails, validationFailed, type ErrorDetail } from './errors.ts'

/**
 * Validates a body against a valibot schema and lists EVERY problem: valibot stops at the
 * first unknown key of an object, so unknown keys are found by walking the schema here. Two
 * bounds keep a body's cost to about that of parsing it (100,000 items of `{}` made valibot
 * list 300,000 problems, holding serve for 12 s):
 * - a collection over its schema's maximum (an array's `maxLength`, a record's `maxEntries`)
 *   is that one problem, and only its first `maximum` elements are looked at;
 * - unknown fields are listed up to MAX_UNKNOWN_FIELDS, the rest counted in one more detail.
 */
export function validateBody<S extends v.GenericSchema>(schema: S, value: unknown, readOnly: ReadonlySet<string> = new Set()): v.InferOutput<S> {
  // valibot's object and record schemas take an array for an object (`[]` passes as `{}`),
  // and records silently drop the keys `__proto__`, `prototype` and `constructor`.
  const shape: ErrorDetail[] = []
  const bounded = _shape(schema, value, [], shape)
  const r = v.safeParse(schema, bounded, { abortEarly: false })
  if (r.success && shape.length === 0) return r.output
  const issues = r.success ? [] : r.issues.filter((i) => !(i.type === 'strict_object' && i.expected === 'never'))
  const details: ErrorDetail[] = issuesToDetails(issues, readOnly)
  _unknownFields(schema, bounded, readOnly, details)
  for (const d of shape) details.push(d)
  throw validationFailed(details.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)))
}

type Action = { type: string; requirement?: unknown; message?: unknown }
type AnySchema = { type: string; entries?: Record<string, AnySchema>; wrapped?: AnySchema; item?: AnySchema; value?: AnySchema; pipe?: readonly Action[] }

const WRAPPERS = new Set(['optional', 'nullable', 'nullish', 'exact_optional', 'non_optional', 'non_nullable'])

/** Keys a valibot record drops without a word; a client's pair must be stored or refused. */
export const DROPPED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'prototype', 'constructor'])

/** The schema's `max_length` or `max_entries` action: its maximum and the problem it names. */
function _maximum(schema: AnySchema, type: 'max_length' | 'max_entries'): { most: number; message: string } | undefined {
  const action = schema.pipe?.find((a) => a.type === type)
  if (!action || typeof action.requirement !== 'number') return undefined
  const noun = type === 'max_length' ? 'items' : 'entries'
  return { most: action.requirement, message: typeof action.message === 'string' ? action.message : `must have at most ${action.requirement} ${noun}` }
}

/**
 * An array where the schema has an object or a record, record keys valibot would drop, and
 * collections over their maximum, added to `out`. Returns `value`, or a copy with each such
 * collection cut to its maximum (copied only along the path to it). `at` is the path so far,
 * extended and restored in place: nothing is allocated for a body without such a problem (it
 * runs on every body).
 */
function _shape(schema: AnySchema, value: unknown, at: (string | number)[], out: ErrorDetail[]): unknown {
  if (value === null || typeof value !== 'object') return value
  if (WRAPPERS.has(schema.type)) return schema.wrapped ? _shape(schema.wrapped, value, at, out) : value
  if (schema.type === 'array') {
    if (!Array.isArray(value) || !schema.item) return value
    const max = _maximum(schema, 'max_length')
    const list: unknown[] = max && value.length > max.most ? value.slice(0, max.most) : value
    if (list !== value) out.push({ path: formatPath(at), message: max!.message })
    let copy = list === value ? undefined : list
    for (let i = 0; i < list.length; i++) {
      at.push(i)
      const item = _shape(schema.item, list[i], at, out)
      at.pop()
      if (item !== list[i]) (copy ??= [...list])[i] = item
    }
    return copy ?? value
  }
  if (schema.type !== 'strict_object' && schema.type !== 'record') return value
  if (Array.isArray(value)) {
    out.push({ path: formatPath(at), message: 'expected Object but received Array' })
    return value
  }
  let o = value as Record<string, unknown>
  let copy: Record<string, unknown> | undefined
  const max = schema.type === 'record' ? _maximum(schema, 'max_entries') : undefined
  if (max && _hasMoreKeys(o, max.most)) {
    out.push({ path: formatPath(at), message: max.message })
    const kept: Record<string, unknown> = {}
    let n = 0
    for (const k in o) {
      if (n++ === max.most) break
      Object.defineProperty(kept, k, { value: o[k], enumerable: true, writable: true, configurable: true })
    }
    o = copy = kept
  }
  // A strict object's unknown keys are _unknownFields' to list: only its entries are walked here.
  const record = schema.type === 'record'
  for (const k in record ? o : schema.entries) {
    if (!record && !Object.hasOwn(o, k)) continue
    at.push(k)
    if (record && DROPPED_KEYS.has(k)) out.push({ path: formatPath(at), message: `the key '${k}' is not allowed` })
    const entry = record ? schema.value : schema.entries![k]
    const child = entry ? _shape(entry, o[k], at, out) : o[k]
    at.pop()
    if (child !== o[k]) {
      // defineProperty: a key `__proto__` stays an own key of the copy (an assignment would set its prototype).
      Object.defineProperty((copy ??= { ...o }), k, { value: child, enumerable: true, writable: true, configurable: true })
    }
  }
  return copy ?? value
}

/** The schema of an object's own entry `k` (never an Object.prototype member such as `constructor`). */
const _entry = (schema: AnySchema, k: string) => (schema.entries && Object.hasOwn(schema.entries, k) ? schema.entries[k] : undefined)

/** Whether `o` has more than `most` keys, found without listing them all. */
function _hasMoreKeys(o: object, most: number): boolean {
  let n = 0
  for (const _ in o) if (n++ === most) return true
  return false
}

/** Unknown fields listed at most; the rest are counted in one more detail. */
export const MAX_UNKNOWN_FIELDS = 1_000

interface Unknowns {
  readOnly: ReadonlySet<string>
  out: ErrorDetail[]
  listed: number
  unlisted: number
  /** The object holding the fields not listed, or '' (the body) when they are in several. */
  unlistedIn?: string
}

/**
 * Each key of a strict object that its schema does not name, as a detail (a read-only field
 * said so), up to MAX_UNKNOWN_FIELDS; past that, they are counted in one last detail at the
 * object that holds them (the body's path, '', when several do): a 1 MiB body can name some
 * 100,000 fields, and listing them all cost more than parsing it.
 */
function _unknownFields(schema: AnySchema, value: unknown, readOnly: ReadonlySet<string>, out: ErrorDetail[]): void {
  const state: Unknowns = { readOnly, out, listed: 0, unlisted: 0 }
  _walkUnknown(schema, value, [], state)
  if (state.unlisted > 0) {
    out.push({ path: state.unlistedIn!, message: `and ${state.unlisted} more unknown field${state.unlisted === 1 ? '' : 's'}, not listed` })
  }
}

function _walkUnknown(schema: AnySchema, value: unknown, at: (string | number)[], state: Unknowns): void {
  if (value === null || typeof value !== 'object') return
  if (WRAPPERS.has(schema.type)) {
    if (schema.wrapped) _walkUnknown(schema.wrapped, value, at, state)
    return
  }
  if (schema.type === 'array') {
    if (!Array.isArray(value) || !schema.item) return
    for (let i = 0; i < value.length; i++) {
      at.push(i)
      _walkUnknown(schema.item, value[i], at, state)
      at.pop()
    }
    return
  }
  if (schema.type !== 'strict_object' || Array.isArray(value) || !schema.entries) return
  const o = value as Record<string, unknown>
  for (const k in o) {
    const entry = _entry(schema, k)
    at.push(k)
    if (entry) _walkUnknown(entry, o[k], at, state)
    else if (state.listed < MAX_UNKNOWN_FIELDS) {
      state.listed++
      state.out.push({ path: formatPath(at), message: state.readOnly.has(k) ? `'${k}' is read-only` : `unknown field '${k}'` })
    } else {
      const where = formatPath(at.slice(0, -1))
      if (state.unlisted++ === 0) state.unlistedIn = where
      else if (state.unlistedIn !== where) state.unlistedIn = '' // in several objects: the body's
    }
    at.pop()
  }
}
