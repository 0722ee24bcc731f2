import fc from 'fast-check'
import { withBranch } from '../../src/http/openapi-examples.ts'

/**
 * fast-check arbitraries from the JSON Schemas of the OpenAPI document (the subset it uses:
 * type, enum, const, anyOf, string length/pattern/format, integer and number bounds, arrays,
 * objects with properties/required/additionalProperties/propertyNames/maxProperties, `$ref`
 * into `components.schemas`). What it generates is close to the schema; `not`, `contains` and
 * the like are left to the caller, which filters with a validator of the exact schema.
 */
export interface ArbitraryOptions {
  /** Component schemas for `#/components/schemas/X`. */
  components?: Record<string, Schema>
  /** Real ids by prefix: a pattern `^<prefix>_…` draws from these (references must name records). */
  ids?: Record<string, string[]>
}

export type Schema = { [key: string]: any }

export function arbitraryOf(schema: Schema, opts: ArbitraryOptions = {}): fc.Arbitrary<unknown> {
  if (schema.$ref) return arbitraryOf(opts.components?.[String(schema.$ref).split('/').pop()!] ?? {}, opts)
  if ('const' in schema) return fc.constant(schema.const)
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum)
  if (Array.isArray(schema.anyOf)) {
    const { anyOf, ...rest } = schema
    return fc.oneof(...(anyOf as Schema[]).map((branch) => arbitraryOf(withBranch(rest, branch), opts)))
  }
  const type = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : undefined
  if (type && type.length > 1) return fc.oneof(...type.map((t: string) => arbitraryOf({ ...schema, type: t }, opts)))
  switch (type?.[0]) {
    case 'string': return _string(schema, opts)
    case 'integer': return fc.integer({ min: _min(schema, -1e6), max: _max(schema, 1e6) })
    case 'number': return _number(schema)
    case 'boolean': return fc.boolean()
    case 'null': return fc.constant(null)
    case 'array': {
      const min = schema.minItems ?? 0
      return fc.array(arbitraryOf(schema.items ?? {}, opts), { minLength: min, maxLength: Math.min(schema.maxItems ?? Infinity, min + 3) })
    }
    case 'object': return _object(schema, opts)
    default: return fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean(), fc.constant(null))
  }
}

function _object(schema: Schema, opts: ArbitraryOptions): fc.Arbitrary<unknown> {
  const properties: Record<string, Schema> = schema.properties ?? {}
  const required: string[] = schema.required ?? []
  const fixed = fc.record(
    Object.fromEntries(Object.entries(properties).map(([name, s]) => [name, arbitraryOf(s, opts)])),
    { requiredKeys: required.filter((k) => k in properties) },
  )
  const extra = schema.additionalProperties
  if (!extra || typeof extra !== 'object') return fixed
  const names = schema.propertyNames ? arbitraryOf({ type: 'string', ...schema.propertyNames }, opts) : fc.string({ minLength: 1, maxLength: 10 })
  const more = fc.dictionary(names as fc.Arbitrary<string>, arbitraryOf(extra, opts), { maxKeys: Math.min(schema.maxProperties ?? 3, 3), noNullPrototype: true })
  return fc.tuple(fixed, more).map(([a, b]) => ({ ...b, ...(a as object) }))
}

const _min = (s: Schema, fallback: number) =>
  s.minimum ?? (s.exclusiveMinimum !== undefined ? Math.floor(s.exclusiveMinimum) + 1 : fallback)
const _max = (s: Schema, fallback: number) =>
  Math.min(s.maximum ?? (s.exclusiveMaximum !== undefined ? Math.ceil(s.exclusiveMaximum) - 1 : fallback), Number.MAX_SAFE_INTEGER)

/** Whole numbers and halves: a money amount has at most as many decimals as its currency (0 for JPY), so halves are also drawn as whole ones. */
function _number(schema: Schema): fc.Arbitrary<number> {
  const min = _min(schema, -1e6)
  const max = Math.min(_max(schema, 1e6), 1e6)
  return fc.integer({ min: Math.ceil(min), max: Math.floor(max) })
}

const _word = fc.stringMatching(/^[a-z][a-z0-9]{0,9}$/)

function _string(schema: Schema, opts: ArbitraryOptions): fc.Arbitrary<string> {
  const min: number = schema.minLength ?? 0
  const max: number = schema.maxLength ?? 200
  const fits = (s: string) => s.length >= min && s.length <= max
  switch (schema.format) {
    case 'date': return fc.date({ min: new Date('1970-01-01'), max: new Date('2999-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10))
    case 'date-time': return fc.date({ min: new Date('1970-01-01'), max: new Date('2999-12-31'), noInvalidDate: true }).map((d) => d.toISOString())
    case 'email': return fc.tuple(_word, _word, fc.constantFrom('com', 'no', 'travel')).map(([a, b, tld]) => `${a}@${b}.${tld}`).filter(fits)
    case 'uri': return fc.tuple(fc.constantFrom('http', 'https'), _word, fc.constantFrom('', '/hook', '/a/b?x=1')).map(([s, host, path]) => `${s}://127.0.0.1/${host}${path}`).filter(fits)
  }
  if (schema.anyOf === undefined && Array.isArray(schema.allOf)) return _string({ ...schema, allOf: undefined, ...schema.allOf[0] }, opts)
  const pattern: string | undefined = schema.pattern
  const prefix = pattern && /^\^(\w+)_/.exec(pattern)?.[1]
  if (prefix && opts.ids?.[prefix]?.length) return fc.constantFrom(...opts.ids[prefix]!)
  if (pattern) return fc.stringMatching(new RegExp(pattern)).filter(fits)
  return fc.string({ minLength: min, maxLength: Math.min(max, min + 20) })
}
