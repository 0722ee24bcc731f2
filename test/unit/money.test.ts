import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { isCurrency, minorDigits, toMajor, toMinor } from '../../src/lib/money.ts'

test('minor digits follow ISO 4217', () => {
  assert.equal(minorDigits('EUR'), 2)
  assert.equal(minorDigits('JPY'), 0)
  assert.equal(minorDigits('KWD'), 3)
  assert.equal(minorDigits('CLF'), 4)
})

test('currency codes: three capital letters known to ISO 4217', () => {
  assert.ok(isCurrency('EUR') && isCurrency('NOK'))
  for (const bad of ['eur', 'EURO', 'XYZ', '', 'E1R']) assert.ok(!isCurrency(bad), bad)
})

test('ISO 4217 codes that the ICU data of the runtime leaves out are currencies too (funds, units of account, VED)', () => {
  // ICU lists circulating currencies only; ISO 4217 also has these, each with its minor digits.
  const codes: Record<string, number> = { BOV: 2, CHE: 2, CHW: 2, CLF: 4, COU: 2, MXV: 2, USN: 2, UYI: 0, UYW: 4, VED: 2 }
  for (const [code, digits] of Object.entries(codes)) {
    assert.ok(isCurrency(code), code)
    assert.equal(minorDigits(code), digits, code)
  }
  assert.equal(toMinor(1.2345, 'CLF'), 12345)
})

test('toMinor refuses excess decimals instead of rounding', () => {
  assert.equal(toMinor(0.1, 'EUR'), 10)
  assert.equal(toMinor(1299.5, 'EUR'), 129950)
  assert.equal(toMinor(1.005, 'EUR'), null)
  assert.equal(toMinor(100.5, 'JPY'), null)
  assert.equal(toMinor(1.001, 'KWD'), 1001)
  assert.equal(toMinor(-1, 'EUR'), null)
  assert.equal(toMinor(Number.NaN, 'EUR'), null)
})

test('minor → major → minor round-trips for every amount with at most the currency digits', () => {
  fc.assert(fc.property(fc.integer({ min: 0, max: 10 ** 13 }), fc.constantFrom('EUR', 'JPY', 'KWD'), (minor, cur) => {
    assert.equal(toMinor(toMajor(minor, cur), cur), minor)
  }))
})
