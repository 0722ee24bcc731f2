import assert from 'node:assert/strict'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import * as v from 'valibot'
import { toOpenApiPath } from '../../src/http/openapi.ts'

/** Formats the document uses, checked the way valibot checks them (an unknown format fails to compile). */
const FORMATS: Record<string, v.GenericSchema> = {
  'date-time': v.pipe(v.string(), v.isoTimestamp()),
  date: v.pipe(v.string(), v.isoDate()),
  email: v.pipe(v.string(), v.email()),
  uri: v.pipe(v.string(), v.url()),
}

/**
 * `schema` made self-contained: its `#/components/schemas/X` references point into `$defs`,
 * which holds the document's component schemas, so ajv can compile it on its own.
 */
export function withComponents(doc: any, schema: object): object {
  const defs = doc.components?.schemas ?? {}
  const rewrite = (x: unknown) => JSON.parse(JSON.stringify(x).replaceAll('"#/components/schemas/', '"#/$defs/'))
  return { ...rewrite(schema), $defs: rewrite(defs) }
}

/** The documented success schema of `method path` (a route path like `/v1/orders/:id`) at `status`. */
export function successSchema(doc: any, method: string, path: string, status: number): object {
  const op = doc.paths[toOpenApiPath(path)]?.[method.toLowerCase()]
  assert.ok(op, `${method} ${path} is not in the document`)
  const schema = op.responses[String(status)]?.content?.['application/json']?.schema
  assert.ok(schema, `${method} ${path} documents no ${status} answer`)
  return schema
}

/** Validates answers against the document's schemas with ajv (strict, every format checked). */
export function documentValidator(doc: any) {
  const ajv = new Ajv2020({ strict: true, allErrors: true })
  for (const [name, schema] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'string', validate: (s: string) => v.is(schema, s) })
  const compiled = new Map<object, ValidateFunction>()
  const check = (schema: object, value: unknown, what: string): void => {
    let validate = compiled.get(schema)
    if (!validate) compiled.set(schema, (validate = ajv.compile(withComponents(doc, schema))))
    if (validate(value)) return
    const errors = validate.errors!.slice(0, 5)
    assert.fail(`${what}: ${ajv.errorsText(errors)}\n${JSON.stringify(errors, null, 1)}\nfor ${JSON.stringify(value).slice(0, 2000)}`)
  }
  return {
    /** The body of a success answer of `method path` against what the document says it is. */
    response(method: string, path: string, status: number, body: unknown): void {
      check(successSchema(doc, method, path, status), body, `${method} ${path} → ${status}`)
    },
    /** A value against a component schema, e.g. `Event`. */
    component(name: string, value: unknown): void {
      const schema = doc.components.schemas[name]
      assert.ok(schema, `no component schema ${name}`)
      check(schema, value, name)
    },
  }
}
