import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import type { OrderRow } from '../../src/db/schema.ts'
import { pageJson, toPage } from '../../src/http/pagination.ts'
import { toMetadataJson } from '../../src/modules/fields.ts'
import { customerJson, orderJson, toOrder } from '../../src/modules/orders/service.ts'

// Rows as createOrder()/updateOrder() write them: the customer through customerJson(), metadata
// through toMetadataJson() (sorted keys, NULL when empty), items as JSON.stringify of minor units.
const text = fc.string({ unit: 'grapheme', maxLength: 12 })
// Descriptions that spell the stored items' own keys and brackets too: orderJson() edits the items as text.
const anyText = fc.oneof(text, fc.string({ unit: 'binary', maxLength: 12 }), fc.constantFrom('"phone":', '\\', '\u2028', '</script>', '__proto__',
  ',"quantity":1,"unitPrice":2}', '","quantity":3,"unitPrice":4},{"x":', '\\","quantity":', ',"unitPrice":', '}]', '1e21'))
const customer = fc.record({
  firstName: anyText, lastName: anyText, email: anyText,
  phone: fc.option(anyText, { nil: undefined }),
})
const item = fc.record({
  productId: fc.option(fc.uuid().map((u) => `prd_${u}`), { nil: null }),
  description: anyText,
  quantity: fc.integer({ min: 1, max: 100_000 }),
  unitPrice: fc.integer({ min: 0, max: 10 ** 9 }),
})
const row = fc.record({
  id: fc.uuid().map((u) => `ord_${u}`),
  tenant_id: fc.constant('ten_x'),
  order_number: fc.integer({ min: 1, max: 10 ** 7 }).map((n) => `ORD-${String(n).padStart(6, '0')}`),
  status: fc.constantFrom('pending', 'confirmed', 'cancelled', 'completed'),
  customer_id: fc.option(fc.uuid().map((u) => `cus_${u}`), { nil: null }),
  customer: customer.map(customerJson),
  items: fc.array(item, { minLength: 1, maxLength: 5 }).map((items) => JSON.stringify(items)),
  total: fc.integer({ min: 0, max: 10 ** 13 }),
  currency: fc.constantFrom('EUR', 'JPY', 'KWD', 'CLF', 'NOK'),
  travel_date: fc.option(fc.constant('2027-06-01'), { nil: null }),
  notes: fc.option(anyText, { nil: null }),
  // Keys with backslashes too: toOrder() reads metadata past V8's misreading of escaped keys after them (lib/json.ts).
  metadata: fc.option(fc.dictionary(fc.oneof(anyText, fc.nat().map(String)), anyText, { maxKeys: 6 }), { nil: null }).map(toMetadataJson),
  created_at: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  updated_at: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
}) as fc.Arbitrary<OrderRow>

describe('orderJson', () => {
  it('is JSON.stringify(toOrder(row)) byte for byte, for rows as the service writes them', () => {
    fc.assert(fc.property(row, (r) => {
      assert.equal(orderJson(r), JSON.stringify(toOrder(r)))
    }), { numRuns: 3000 })
  })

  it('renders stored items of any other shape as toOrder() reads them', () => {
    const base = fc.sample(row, 1)[0]!
    for (const items of [
      '[{"description":"a","productId":null,"unitPrice":150,"quantity":2}]', // keys in another order
      '[{"productId":null,"description":"a","quantity":2,"unitPrice":150,"note":"x"}]', // a key after unitPrice
      '[{"productId":null,"description":"a","quantity":2,"unitPrice":1.5e2}]', // numbers JSON.stringify would not write
      '[{"productId":null,"description":"a","quantity":2e0,"unitPrice":150}]',
      '[{"productId":null,"description":"a","quantity":2,"unitPrice":150},{"productId":null,"description":"b","unitPrice":7,"quantity":1}]',
      '[{"productId":null,"description":"a","quantity":2,"unitPrice":150}, {"productId":null,"description":"b","quantity":1,"unitPrice":7}]',
      '[{"productId":null,"description":"a","quantity":2,"unitPrice":150} ]', // spaces anywhere
      '[ {"productId":null,"description":"a","quantity":2,"unitPrice":150}]',
      '[{"productId": null,"description":"a","quantity":2,"unitPrice":150}]',
      '[{"productId":"prd_1" ,"description":"a","quantity":2,"unitPrice":150}]',
      '[{"productId":null,"description":"a" ,"quantity":2,"unitPrice":150}]',
      '[{"productId":null,"description":"a","quantity":2,"unitPrice":150 }]',
      '[{"productId":"prd_\\"x","description":"a","quantity":2,"unitPrice":150}]',
      '[{"productId":null,"description":"a","quantity":12345678901234567,"unitPrice":150}]',
      '[{"productId":null,"description":"a","quantity":2,"unitPrice":0},{"productId":null,"description":"b","quantity":1,"unitPrice":999999999999999}]',
      '[{"productId":null,"description":"a","quantity":2,"unitPrice":1000000000000000}]', // 16 digits
      '[{"productId":null,"description":"a","quantity":2,"unitPrice":-150}]',
      '[]',
    ]) assert.equal(orderJson({ ...base, items }), JSON.stringify(toOrder({ ...base, items })), items)
    // Not JSON at all (a leading zero): refused by both, not rendered.
    const invalid = '[{"productId":null,"description":"a","quantity":02,"unitPrice":150}]'
    assert.throws(() => toOrder({ ...base, items: invalid }), SyntaxError)
    assert.throws(() => orderJson({ ...base, items: invalid }), SyntaxError)
  })

  it('adds "phone": null last to a customer stored without one, and keeps a stored phone where it is', () => {
    const base = fc.sample(row, 1)[0]!
    const without = { ...base, customer: customerJson({ firstName: 'A', lastName: 'B', email: 'a@b.c' }) }
    assert.match(orderJson(without), /"customer":\{"firstName":"A","lastName":"B","email":"a@b.c","phone":null\}/)
    const withPhone = { ...base, customer: customerJson({ firstName: 'A', lastName: 'B', email: 'a@b.c', phone: '+47 1' }) }
    assert.match(orderJson(withPhone), /"customer":\{"firstName":"A","lastName":"B","email":"a@b.c","phone":"\+47 1"\}/)
    assert.equal(orderJson({ ...base, metadata: null }).includes('"metadata":{}'), true)
  })
})

describe('toPage with a renderer', () => {
  it('renders the same page as mapping each row, and maps its data only when read', () => {
    fc.assert(fc.property(fc.array(row, { maxLength: 25 }), fc.integer({ min: 1, max: 20 }), (rows, limit) => {
      let mapped = 0
      const map = (r: OrderRow) => (mapped++, toOrder(r))
      const rendered = toPage(rows, limit, map, orderJson)
      const plain = toPage(rows, limit, toOrder)
      assert.equal(mapped, 0)
      assert.equal(pageJson(rendered), pageJson(plain))
      assert.equal(rendered.has_more, plain.has_more)
      assert.equal(rendered.next_cursor, plain.next_cursor)
      assert.deepEqual(rendered.data, plain.data)
      assert.equal(JSON.stringify(rendered), pageJson(plain))
    }), { numRuns: 300 })
  })
})
