import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Ajv2020 } from 'ajv/dist/2020.js'
import fc from 'fast-check'
import * as v from 'valibot'
import { exampleOf } from '../../src/http/openapi-examples.ts'
import { toSchema } from '../../src/http/openapi-schema.ts'
import { documented } from '../../src/lib/schema-hints.ts'
import { Country, Currency, Metadata, Phone, text } from '../../src/modules/fields.ts'
import { arbitraryOf, type Schema } from '../helpers/schema-arbitrary.ts'

// The converter states what the validation checks (CONTRACT §16), and the arbitraries of
// test/helpers/schema-arbitrary.ts generate what the schemas allow.

const ajv = new Ajv2020({ strict: false })
ajv.addFormat('date', /^\d{4}-\d{2}-\d{2}$/)
ajv.addFormat('date-time', { type: 'string', validate: (s: string) => !Number.isNaN(Date.parse(s)) })

test('a documented check carries its keywords; an undocumented one its message', () => {
  const odd = documented(v.check((n: number) => n % 2 === 1, 'must be odd'), { not: { multipleOf: 2 } })
  assert.deepEqual(toSchema(v.pipe(v.number(), odd), 'input'), { type: 'number', not: { multipleOf: 2 } })
  assert.deepEqual(toSchema(v.pipe(v.number(), v.check((n) => n > 1, 'must be more than 1')), 'input'), { type: 'number', description: 'Must be more than 1' })
})

test('the shared fields: enums for currency and country, \\S for trimmed text that must not be empty, record keys', () => {
  const currency = toSchema(Currency, 'input')
  assert.ok((currency.enum as string[]).includes('EUR') && !(currency.enum as string[]).includes('XYZ'))
  assert.ok((toSchema(Country, 'input').enum as string[]).includes('NO'))
  const name = toSchema(text(10), 'input')
  assert.equal(name.pattern, '\\S')
  for (const s of ['   ', '', 'x'.repeat(11)]) assert.equal(ajv.validate(name, s), false, s)
  assert.equal(ajv.validate(toSchema(Phone, 'input'), '+ -  '), false)
  assert.equal(v.is(Phone, '+ -  '), false, 'the server refuses it too')
  const metadata = toSchema(Metadata, 'input')
  for (const key of ['__proto__', 'constructor', 'prototype', '']) assert.equal(ajv.validate(metadata, JSON.parse(`{${JSON.stringify(key)}:"x"}`)), false, key)
})

test('examples validate against their schemas', () => {
  for (const schema of [Currency, Country, Phone, text(3), Metadata, v.strictObject({ a: text(5), b: v.optional(Currency) })]) {
    const json = toSchema(schema, 'input')
    assert.ok(ajv.validate(json, exampleOf(json)), `${JSON.stringify(exampleOf(json))} for ${JSON.stringify(json).slice(0, 200)}`)
  }
})

test('arbitraries generate values their schemas accept', () => {
  const schemas: Schema[] = [
    { type: 'string', minLength: 2, maxLength: 5 },
    { type: 'string', pattern: '^[a-z]{3}-\\d$' },
    { type: 'string', format: 'date' },
    { type: 'integer', minimum: 3, maximum: 9 },
    { type: 'number', exclusiveMinimum: 0, maximum: 10 },
    { anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'null' }] },
    { type: 'array', items: { type: 'boolean' }, minItems: 1, maxItems: 2 },
    { type: 'object', properties: { a: { type: 'integer' }, b: { const: 1 } }, required: ['a'], additionalProperties: false },
    { type: 'object', propertyNames: { type: 'string', pattern: '^k\\d$' }, additionalProperties: { type: 'string', maxLength: 2 }, maxProperties: 2 },
    { $ref: '#/components/schemas/X' },
  ]
  for (const schema of schemas) {
    const resolved = schema.$ref ? { type: 'string', const: 'x' } : schema
    fc.assert(fc.property(arbitraryOf(schema, { components: { X: resolved } }), (value) => ajv.validate(resolved, value)), { numRuns: 100, seed: 7 })
  }
  const ids = fc.sample(arbitraryOf({ type: 'string', pattern: '^ord_[0-9a-f-]{36}$' }, { ids: { ord: ['ord_1'] } }), 5)
  assert.deepEqual(new Set(ids), new Set(['ord_1']), 'an id pattern draws from the real ids given')
})
