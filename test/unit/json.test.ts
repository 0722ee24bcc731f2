import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { parseJson } from '../../src/lib/json.ts'

/** A first key no object had before: objects starting with it have a shape of their own. */
const fresh = () => `f${randomUUID().replaceAll('-', '')}`

/** Makes V8 expect `key` (raw JSON text) after `first` in later objects (nodejs/node#63785). */
const poison = (first: string, key: string) => JSON.parse(`{"${first}":[],"${key}":0}`)

/** Every key of a value, depth first, in order: what key order and names must match. */
const keyPaths = (value: unknown, at = ''): string[] => {
  if (value === null || typeof value !== 'object') return []
  return Object.keys(value).flatMap((k) => [`${at}/${JSON.stringify(k)}`, ...keyPaths((value as Record<string, unknown>)[k], `${at}/${JSON.stringify(k)}`)])
}

describe('parseJson', () => {
  it('reads every kind of escaped key right where V8 has been taught to expect a key with a backslash', () => {
    for (const [raw, name] of [['\\u00e9', 'é'], ['\\n', '\n'], ['\\"', '"'], ['\\/', '/'], ['\\b', '\b'], ['\\f', '\f'], ['\\r', '\r'], ['\\t', '\t'], ['\\u0000', '\u0000'], ['\\u0041', 'A'], ['\\\\', '\\']]) {
      for (const before of ['', 'x', 'ab']) {
        const first = fresh()
        poison(first, `${before}\\\\`)
        const value = parseJson(`{"${first}":1,"${before}${raw}":2}`) as Record<string, unknown>
        assert.deepEqual(Object.keys(value), [first, `${before}${name}`], `${before}${raw}`)
        assert.equal(value[`${before}${name}`], 2)
      }
    }
  })

  it('reads them right at any depth, in arrays, and beside keys and values that need no help', () => {
    const first = fresh()
    poison(first, 'x\\\\')
    const text = ` { "a" : [ {"${first}" : "v\\n\\"" , "x\\"" : { "${first}":null,"x\\n"\t:\r\n[1,"\\\\"] } } ], "\\u0062": true }`
    assert.deepEqual(parseJson(text), { a: [{ [first]: 'v\n"', 'x"': { [first]: null, 'x\n': [1, '\\'] } }], b: true })
  })

  it('keeps JSON.parse’s answer for key order, integer-like keys, repeated keys and __proto__', () => {
    assert.deepEqual(Object.keys(parseJson('{"b":1,"\\u0031":2,"a":3,"0":4}') as object), ['0', '1', 'b', 'a'])
    assert.deepEqual(Object.entries(parseJson('{"a":1,"\\u0062":2,"b":3}') as object), [['a', 1], ['b', 3]])
    assert.deepEqual(Object.entries(parseJson('{"b":3,"\\u0062":2}') as object), [['b', 2]])
    assert.deepEqual(Object.entries(parseJson('{"\\u0062":1,"\\u0062":2}') as object), [['b', 2]])
    for (const text of ['{"\\u005f_proto__":{"polluted":1},"x\\n":1}', '{"__proto__":{"polluted":1},"x\\n":1}']) {
      const value = parseJson(text) as Record<string, unknown>
      assert.equal(Object.getPrototypeOf(value), Object.prototype, text)
      assert.deepEqual(Object.keys(value), ['__proto__', 'x\n'], text)
      assert.deepEqual(Object.getOwnPropertyDescriptor(value, '__proto__')?.value, { polluted: 1 })
      assert.equal((value as { polluted?: unknown }).polluted, undefined)
    }
  })

  it('does not mistake a text’s own keys for its placeholders', () => {
    assert.deepEqual(parseJson('{"#k:0":"own","\\u00e9":"escaped","#k0:0":"own too"}'), { '#k:0': 'own', é: 'escaped', '#k0:0': 'own too' })
  })

  it('refuses what is not JSON with JSON.parse’s own error', () => {
    for (const text of ['{"a\\n":}', '{"a\\q":1}', '{"a":"\\', '']) {
      const own = (() => { try { JSON.parse(text) } catch (err) { return err as Error } })()!
      assert.throws(() => parseJson(text), (err: Error) => err instanceof SyntaxError && err.message === own.message, text)
    }
  })

  it('reads a key with an escape at the bottom of deep nesting without recursion', () => {
    const depth = 200_000
    const value = parseJson(`${'['.repeat(depth)}{"x\\n":1}${']'.repeat(depth)}`)
    let inner: unknown = value
    for (let i = 0; i < depth; i++) inner = (inner as unknown[])[0]
    assert.deepEqual(inner, { 'x\n': 1 })
  })

  it('gives back any JSON value, its keys written with escapes at random, after V8 was taught to misread each of them', () => {
    const key = fc.string({ unit: fc.constantFrom('a', 'é', '"', '\\', '\n', '/', '\u0000', '1', '_'), maxLength: 4 })
    const own = (entries: [string, unknown][]) => {
      const o: Record<string, unknown> = {}
      for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true })
      return o
    }
    const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer(), key, tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 3 }),
      // A first key of its own: each object has a shape no earlier run taught V8 anything about.
      object: fc.uniqueArray(fc.tuple(key, tie('value')), { selector: ([k]) => k, maxLength: 4 }).map((entries) => own([[fresh(), 0], ...entries])),
    })).value
    fc.assert(fc.property(json, fc.infiniteStream(fc.boolean()), (value, flips) => {
      const escapeThis = flips[Symbol.iterator]()
      const lessons: string[] = []
      // Keys written with every character escaped (\uXXXX) or as JSON.stringify writes them, at random;
      // for each escaped one, an object of the same keys before it and, in its place, the key V8 would then misread it as.
      const write = (v: unknown): string => {
        if (v === null || typeof v !== 'object') return JSON.stringify(v)
        if (Array.isArray(v)) return `[${v.map(write).join(',')}]`
        const entries = Object.entries(v)
        return `{${entries.map(([k, item], i) => {
          if (!escapeThis.next().value) return `${JSON.stringify(k)}:${write(item)}`
          const raw = [...k].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')
          if (k !== '') lessons.push(`{${entries.slice(0, i).map(([pk, pv]) => `${JSON.stringify(pk)}:${JSON.stringify(pv)}`).concat(`${JSON.stringify(raw.slice(0, k.length))}:0`).join(',')}}`)
          return `"${raw}":${write(item)}`
        }).join(',')}}`
      }
      const text = write(value)
      for (const lesson of lessons) JSON.parse(lesson)
      const parsed = parseJson(text)
      assert.deepEqual(keyPaths(parsed), keyPaths(value), text)
      assert.deepStrictEqual(parsed, value, text)
    }), { numRuns: 2000 })
  })

  it('is what src/ reads tenant-keyed JSON with: every JSON.parse left reads a text whose keys are travelops\' own', () => {
    // A new JSON.parse fails this until it is added here, after checking that no tenant names its keys.
    const ours: Record<string, string[]> = {
      'delivery/stored-headers.ts': ['JSON.parse(text)'], // a subscription's stored headers: names are HTTP tokens (no backslash, no quote)
      'delivery/rules/fan-out.ts': ['JSON.parse(events)'], // an array of event names
      'delivery/webhook-json.ts': ['JSON.parse(row.events)', 'JSON.parse(row.headers)'], // event names; header names are HTTP tokens
      'auth.ts': ['JSON.parse(row.scopes)'],
      'lib/json.ts': ['JSON.parse(text)', 'JSON.parse(text)', 'JSON.parse(text.slice(spans[i], spans[i + 1]))', 'JSON.parse(renamed + text.slice(from))'],
      'modules/invoices/view.ts': ['JSON.parse(row.lines)', 'JSON.parse(row.lines)'],
      'modules/itineraries/service.ts': ['JSON.parse(row.days)', 'JSON.parse(row.days)'],
      'modules/keys/api.ts': ['JSON.parse(row.scopes)', 'JSON.parse(row.scopes)', 'JSON.parse(caller.scopes)'],
      'modules/keys/service.ts': ['JSON.parse(row.scopes)'],
      'modules/orders/service.ts': ['JSON.parse(row.items)', 'JSON.parse(text)', 'JSON.parse(json)', 'JSON.parse(row.items)', 'JSON.parse(row.items)'], // stored items: keys are ours
      'modules/webhooks/deliveries.ts': ['JSON.parse(webhook.events)'],
    }
    const root = new URL('../../src/', import.meta.url)
    const found: Record<string, string[]> = {}
    for (const file of readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).sort()) {
      const calls = readFileSync(new URL(file, root), 'utf8').match(/JSON\.parse\([^()]*(?:\([^()]*\)[^()]*)*\)/g)
      if (calls) found[file] = calls
    }
    assert.deepEqual(found, ours)
  })
})
