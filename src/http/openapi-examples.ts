import type { JsonObject } from './openapi-schema.ts'

/**
 * An example value for a request schema of the document (a body or a query parameter), built
 * from the schema itself so that it always validates: a field's own `examples` first, then
 * `const`, `default`, the first of an `enum`, and a plain value for the type, its format and
 * its bounds. An object gets its required properties and the optional ones that name their own
 * example; references to other records are left out where optional (they would have to exist).
 */
export function exampleOf(schema: JsonObject): unknown {
  const examples = schema.examples as unknown[] | undefined
  if (examples?.length) return examples[0]
  if ('const' in schema) return schema.const
  if (schema.default !== undefined) return schema.default
  if (Array.isArray(schema.enum)) return schema.enum[0]
  if (Array.isArray(schema.anyOf)) {
    const { anyOf, ...rest } = schema
    const branches = anyOf as JsonObject[]
    return exampleOf(withBranch(rest, branches.find((b) => b.type !== 'null') ?? branches[0]!))
  }
  switch (schema.type) {
    case 'string': return _string(schema)
    case 'integer': return _number(schema, 1)
    case 'number': return _number(schema, 10)
    case 'boolean': return true
    case 'null': return null
    case 'array': return Array.from({ length: Math.max(1, (schema.minItems as number | undefined) ?? 1) }, () => exampleOf((schema.items ?? {}) as JsonObject))
    case 'object': {
      const required = new Set((schema.required ?? []) as string[])
      const out: JsonObject = {}
      for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonObject>)) {
        if (required.has(name) || _ownExample(property)) out[name] = exampleOf(property)
      }
      return out
    }
    default: return {}
  }
}

/** `schema` (without its `anyOf`) and one branch of it, as one schema: the branch's properties and required names are added to the schema's. */
export function withBranch(schema: JsonObject, branch: JsonObject): JsonObject {
  const merged: JsonObject = { ...schema, ...branch }
  if (schema.properties && branch.properties) merged.properties = { ...(branch.properties as object), ...(schema.properties as object) }
  if (schema.required && branch.required) merged.required = [...new Set([...(schema.required as string[]), ...(branch.required as string[])])]
  return merged
}

/** An optional property that names its own example (or whose non-null branch does). */
function _ownExample(schema: JsonObject): boolean {
  if ((schema.examples as unknown[] | undefined)?.length) return true
  return Array.isArray(schema.anyOf) && (schema.anyOf as JsonObject[]).some((b) => (b.examples as unknown[] | undefined)?.length)
}

/** Examples of the patterns the API uses, by their source; ids are `<prefix>_` + a UUIDv7. */
const _PATTERNS: [RegExp, (m: RegExpMatchArray) => string][] = [
  [/^\^(\w+)_/, (m) => `${m[1]}_01936b2e-7c4a-7def-8123-456789abcdef`],
  [/\[0-9 \(\)\.-\]/, () => '+47 22 12 34 56'],
  [/^\^\[A-Za-z0-9\]\[A-Za-z0-9\._-\]/, () => 'TOUR-01'],
  [/^\^\[a-z0-9\]\+/, () => 'spring-offers'],
]

function _string(schema: JsonObject): string {
  const format = schema.format as string | undefined
  if (format === 'date') return '2027-06-01'
  if (format === 'date-time') return '2027-06-01T09:30:00Z'
  if (format === 'email') return 'ada@example.com'
  if (format === 'uri') return 'https://example.com/'
  const pattern = schema.pattern as string | undefined
  for (const [re, make] of _PATTERNS) {
    const m = pattern?.match(re)
    if (m) return make(m)
  }
  const min = (schema.minLength as number | undefined) ?? 0
  const max = (schema.maxLength as number | undefined) ?? 100
  return 'Example'.padEnd(min, 'x').slice(0, max)
}

function _number(schema: JsonObject, preferred: number): number {
  const min = (schema.minimum as number | undefined) ?? (schema.exclusiveMinimum as number | undefined)
  const max = (schema.maximum as number | undefined) ?? (schema.exclusiveMaximum as number | undefined)
  let n = preferred
  if (min !== undefined && n < min) n = schema.minimum !== undefined ? min : min + 1
  if (max !== undefined && n > max) n = schema.maximum !== undefined ? max : max - 1
  return n
}
