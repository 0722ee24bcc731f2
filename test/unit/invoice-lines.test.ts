import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { asApiError } from '../../src/http/errors.ts'
import { InvalidError } from '../../src/lib/errors.ts'
import { priceLines } from '../../src/modules/invoices/view.ts'

const line = fc.record({ cents: fc.integer({ min: 0, max: 10_000_000 }), quantity: fc.integer({ min: 1, max: 1000 }) })

test('invoice totals are the exact sum of the lines in minor units', () => {
  fc.assert(fc.property(fc.array(line, { minLength: 1, maxLength: 100 }), (lines) => {
    const priced = priceLines(lines.map((l) => ({ description: 'x', quantity: l.quantity, unitPrice: l.cents / 100 })), 'EUR')
    assert.equal(priced.total, lines.reduce((sum, l) => sum + l.cents * l.quantity, 0))
    assert.deepEqual(JSON.parse(priced.lines).map((l: { unitPrice: number }) => l.unitPrice), lines.map((l) => l.cents))
  }))
})

test('a line with a third decimal in EUR is refused at its own path', () => {
  fc.assert(fc.property(fc.array(line, { minLength: 1, maxLength: 20 }), fc.nat(), fc.integer({ min: 1, max: 9 }), (lines, at, mill) => {
    const bad = at % lines.length
    const input = lines.map((l, i) => ({ description: 'x', quantity: l.quantity, unitPrice: i === bad ? (l.cents * 10 + mill) / 1000 : l.cents / 100 }))
    assert.throws(() => priceLines(input, 'EUR'), (err: unknown) => {
      assert.ok(err instanceof InvalidError)
      assert.equal(asApiError(err)?.status, 422)
      assert.deepEqual(err.details?.map((d) => d.path), [`lines[${bad}].unitPrice`])
      return true
    })
  }))
})
