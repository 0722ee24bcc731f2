import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import type { ApiKeyRow, CustomerRow, DeliveryAttemptRow, InquiryRow, InvoiceRow, ItineraryRow, PaymentRow, ProductRow, SupplierRow, WebhookRow } from '../../src/db/schema.ts'
import { pageJson, toPage } from '../../src/http/pagination.ts'
import { customerJson, toCustomer } from '../../src/modules/customers/service.ts'
import { toAddressJson, toMetadataJson } from '../../src/modules/fields.ts'
import { inquiryJson, toInquiry } from '../../src/modules/inquiries/service.ts'
import { apiKeyJson, toApiKey } from '../../src/modules/keys/api.ts'
import { invoiceJson, toInvoice } from '../../src/modules/invoices/view.ts'
import { itineraryJson, toItinerary } from '../../src/modules/itineraries/service.ts'
import { paymentJson, toPayment } from '../../src/modules/payments/service.ts'
import { productJson, toProduct } from '../../src/modules/products/service.ts'
import { supplierJson, toSupplier } from '../../src/modules/suppliers/service.ts'
import { toWebhook, webhookJson } from '../../src/delivery/webhook-json.ts'
import { deliveryDetailJson, deliveryJson, toDelivery, toDeliveryWithAttempts } from '../../src/modules/webhooks/deliveries.ts'
import type { DeliveryWithPayload } from '../../src/modules/webhooks/repo.ts'

// Rows as the services write them: JSON columns as JSON.stringify wrote them (metadata through
// toMetadataJson(), sorted keys and NULL when empty; addresses through toAddressJson()), every
// tenant's text drawn to include what JSON escapes, lone surrogates and the keys V8 misreads
// (lib/json.ts). Each renderer must equal JSON.stringify of its mapper, byte for byte.
const text = fc.string({ unit: 'grapheme', maxLength: 12 })
const anyText = fc.oneof(text, fc.string({ unit: 'binary', maxLength: 12 }), fc.constantFrom('"', '\\', '\u2028', '€', '\ud800', '</script>', '__proto__', 'null'))
const key = fc.oneof(anyText, fc.nat().map(String), fc.constantFrom('x\\', 'x\u00e9', 'x\n', 'x"', '__proto__'))
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null })
const id = (prefix: string) => fc.uuid().map((u) => `${prefix}_${u}`)
const time = fc.date({ noInvalidDate: true }).map((d) => d.toISOString())
const day = fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10))
const metadata = opt(fc.dictionary(fc.oneof(anyText, fc.nat().map(String), key), anyText, { maxKeys: 6 })).map(toMetadataJson)
const address = opt(fc.record({ line1: anyText, line2: opt(anyText), city: anyText, region: opt(anyText), postalCode: opt(anyText), country: fc.constantFrom('NO', 'GB', 'JP') }))
  .map((a) => toAddressJson(a))
const currency = fc.constantFrom('EUR', 'JPY', 'KWD', 'CLF', 'NOK')
const minor = fc.integer({ min: 0, max: 10 ** 13 })
const common = { tenant_id: fc.constant('ten_x'), metadata, created_at: time, updated_at: time }

const customers = fc.record({
  ...common, id: id('cus'), first_name: anyText, last_name: anyText, email: anyText, phone: opt(anyText), address, notes: opt(anyText),
}) as fc.Arbitrary<CustomerRow>
const suppliers = fc.record({
  ...common, id: id('sup'), name: anyText, type: fc.constantFrom('hotel', 'transport', 'guide', 'activity', 'other'), email: opt(anyText), phone: opt(anyText),
  address, notes: opt(anyText),
}) as fc.Arbitrary<SupplierRow>
const products = fc.record({
  ...common, id: id('prd'), name: anyText, description: opt(anyText), code: opt(anyText), price: minor, currency,
  duration_minutes: opt(fc.integer({ min: 1, max: 100_000 })), location: opt(anyText), capacity: opt(fc.integer({ min: 1, max: 100_000 })), active: fc.constantFrom(0, 1),
}) as fc.Arbitrary<ProductRow>
const inquiries = fc.record({
  ...common, id: id('inq'), name: anyText, email: anyText, phone: opt(anyText), message: anyText, product_id: opt(id('prd')), travel_date: opt(day),
  travelers: opt(fc.integer({ min: 1, max: 1000 })), status: fc.constantFrom('new', 'contacted', 'converted', 'closed'),
}) as fc.Arbitrary<InquiryRow>
const payments = fc.record({
  ...common, id: id('pay'), amount: minor, currency, method: fc.constantFrom('card', 'bank_transfer', 'cash', 'other'), order_id: opt(id('ord')),
  invoice_id: opt(id('inv')), reference: opt(anyText), status: fc.constantFrom('completed', 'partially_refunded', 'refunded'), refunded_amount: minor,
}) as fc.Arbitrary<PaymentRow>
const itineraries = fc.record({
  ...common, id: id('itn'), title: anyText, order_id: opt(id('ord')), customer_id: opt(id('cus')), start_date: day, end_date: day,
  days: fc.array(fc.record({ day: fc.integer({ min: 1, max: 365 }), date: opt(day), title: anyText, description: opt(anyText), items: fc.array(anyText, { maxLength: 3 }) }), { maxLength: 4 })
    .map((days) => JSON.stringify(days)),
}) as fc.Arbitrary<ItineraryRow>
const invoices = fc.record({
  ...common, id: id('inv'), invoice_number: fc.integer({ min: 1, max: 10 ** 7 }).map((n) => `INV-${String(n).padStart(6, '0')}`), order_id: opt(id('ord')),
  customer_id: opt(id('cus')), status: fc.constantFrom('draft', 'sent', 'paid', 'void'),
  lines: fc.array(fc.record({ description: anyText, quantity: fc.integer({ min: 1, max: 100_000 }), unitPrice: fc.integer({ min: 0, max: 10 ** 9 }) }), { minLength: 1, maxLength: 4 })
    .map((lines) => JSON.stringify(lines)),
  total: minor, amount_paid: minor, currency, due_date: opt(day), paid_at: opt(time),
}) as fc.Arbitrary<InvoiceRow>
const keys = fc.record({
  id: id('key'), tenant_id: fc.constant('ten_x'), name: opt(anyText), key_hash: fc.constant('h'), key_prefix: fc.constant('tok_live_ab12'),
  scopes: fc.array(fc.constantFrom('*', 'orders:read', 'orders:write', 'keys:write'), { minLength: 1, maxLength: 3 }).map((s) => JSON.stringify(s)),
  rate_limit: opt(fc.integer({ min: 1, max: 10 ** 9 })), created_at: time, expires_at: opt(time), revoked_at: opt(time), last_used_at: opt(time),
}) as fc.Arbitrary<ApiKeyRow>
const webhooks = fc.record({
  id: id('wh'), tenant_id: fc.constant('ten_x'), url: anyText.map((t) => `https://hooks.example.com/${t}`),
  events: fc.array(fc.constantFrom('*', 'order.created', 'customer.updated'), { minLength: 1, maxLength: 3 }).map((e) => JSON.stringify(e)),
  secret: fc.constant('whsec_secret_never_shown'), headers: fc.dictionary(fc.stringMatching(/^[A-Za-z0-9-]{1,20}$/), anyText, { maxKeys: 3 }).map((h) => JSON.stringify(h)),
  active: fc.constantFrom(0, 1), retry_count: fc.integer({ min: 0, max: 10 }), created_at: time, updated_at: time, deleted_at: fc.constant(null),
  failing_since: opt(time), disabled_at: opt(time), disabled_reason: opt(fc.constantFrom('failing', 'gone')),
}) as fc.Arbitrary<WebhookRow>
// A payload is the envelope emit() wrote: JSON.stringify's output, with any data a record carries.
const payload = fc.record({
  id: id('evt'), event: fc.constantFrom('order.created', 'customer.updated', 'content.created'), timestamp: time, tenant_id: fc.constant('ten_x'),
  data: fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 }),
}).map((e) => JSON.stringify(e))
const deliveries = fc.record({
  id: id('del'), tenant_id: fc.constant('ten_x'), webhook_id: id('wh'), event_id: id('evt'), event: fc.constantFrom('order.created', 'customer.updated'),
  status: fc.constantFrom('pending', 'delivered', 'failed', 'exhausted'), attempts: fc.integer({ min: 0, max: 10_000 }), retries: fc.nat(10),
  response_code: opt(fc.integer({ min: 100, max: 599 })), created_at: time, delivered_at: opt(time), last_attempt_at: opt(time), next_retry_at: opt(time),
  due_at: opt(time), manual: fc.constantFrom(0, 1), locked_until: opt(time), locked_by: opt(fc.constant('w1')), payload,
}) as fc.Arbitrary<DeliveryWithPayload>

const cases: [string, fc.Arbitrary<never>, (row: never) => unknown, (row: never) => string | string[]][] = [
  ['customerJson', customers as never, toCustomer as never, customerJson as never],
  ['supplierJson', suppliers as never, toSupplier as never, supplierJson as never],
  ['productJson', products as never, toProduct as never, productJson as never],
  ['inquiryJson', inquiries as never, toInquiry as never, inquiryJson as never],
  ['paymentJson', payments as never, toPayment as never, paymentJson as never],
  ['itineraryJson', itineraries as never, toItinerary as never, itineraryJson as never],
  ['invoiceJson', invoices as never, toInvoice as never, invoiceJson as never],
  ['deliveryJson', deliveries as never, toDelivery as never, deliveryJson as never],
  ['apiKeyJson', keys as never, toApiKey as never, apiKeyJson as never],
  ['webhookJson', webhooks as never, toWebhook as never, webhookJson as never],
]

describe('records rendered from their rows', () => {
  for (const [name, rows, map, json] of cases) {
    it(`${name} is JSON.stringify of the mapper, byte for byte`, () => {
      fc.assert(fc.property(rows, (r) => {
        const rendered = json(r)
        assert.equal(typeof rendered === 'string' ? rendered : rendered.join(''), JSON.stringify(map(r)))
      }), { numRuns: 1500 })
    })
  }

  it('deliveryDetailJson is JSON.stringify(toDeliveryWithAttempts()), byte for byte', () => {
    const attempt = fc.record({
      delivery_id: id('del'), attempt: fc.integer({ min: 1, max: 10_000 }), tenant_id: fc.constant('ten_x'), at: time, trigger: fc.constantFrom('automatic', 'manual'),
      response_code: opt(fc.integer({ min: 100, max: 599 })), duration_ms: fc.nat(30_000), error: opt(anyText), response_body: opt(anyText),
    }) as fc.Arbitrary<DeliveryAttemptRow>
    fc.assert(fc.property(deliveries, fc.array(attempt, { maxLength: 4 }), (r, attempts) => {
      assert.equal(deliveryDetailJson(r, attempts), JSON.stringify(toDeliveryWithAttempts(r, attempts)))
    }), { numRuns: 1500 })
  })

  it('a page of deliveries is the page of their mapped records, cut at the same record when the payloads are large', () => {
    const base = fc.sample(deliveries, 40)
    // Payloads of three-byte characters: the page passes 64 K characters (kept as bytes) and then 4 MiB.
    for (const [chars, n] of [[0, 30], [1_000, 30], [30_000, 20], [150_000, 12], [600_000, 4]] as const) {
      const rows = base.slice(0, n).map((r, i) => ({
        ...r, id: `del_${String(99 - i).padStart(3, '0')}`,
        payload: chars === 0 ? r.payload : JSON.stringify({ id: `evt_${i}`, event: 'content.created', data: { body: `${'€'.repeat(chars)}"\\${i}` } }),
      }))
      for (const limit of [1, 7, 100]) {
        let mapped = 0
        const rendered = toPage(rows, limit, (r: DeliveryWithPayload) => (mapped++, toDelivery(r)), deliveryJson)
        const plain = toPage(rows, limit, toDelivery)
        assert.equal(mapped, 0, 'the records were not mapped to objects')
        assert.deepEqual(pageJson(rendered), pageJson(plain))
        assert.deepEqual([rendered.has_more, rendered.next_cursor], [plain.has_more, plain.next_cursor])
        if (limit === 100) assert.equal(Buffer.isBuffer(pageJson(rendered)), chars >= 30_000)
        if (limit === 100 && chars >= 150_000) assert.equal(rendered.has_more, true, 'the page ended by size')
      }
    }
  })
})
