import type { EventName } from '../../events/catalog.ts'
import { toCustomer } from '../customers/index.ts'
import { toInquiry } from '../inquiries/index.ts'
import { toInvoice } from '../invoices/index.ts'
import { toItinerary } from '../itineraries/index.ts'
import { toOrder } from '../orders/index.ts'
import { toPayment } from '../payments/index.ts'
import { toProduct } from '../products/index.ts'
import { toWebhook } from './service.ts'

/**
 * An example record for each event (the `data` of a test event, CONTRACT §11, and of the event
 * catalog): stored rows of a fictional booking turned into the API's views by the same
 * functions that render real records, so an example always has exactly a real record's shape.
 */
export function exampleData(event: EventName, tenantId: string, at: string): unknown {
  const base = { tenant_id: tenantId, metadata: JSON.stringify({ source: 'example' }), created_at: at, updated_at: at }
  switch (event.split('.')[0]) {
    case 'order': {
      const status = event === 'order.confirmed' ? 'confirmed' : event === 'order.cancelled' ? 'cancelled' : 'pending'
      return toOrder({
        ...base, id: _ID.ord, order_number: 'ORD-000042', status, customer_id: _ID.cus,
        customer: JSON.stringify({ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0958' }),
        items: JSON.stringify([
          { productId: _ID.prd, description: 'Fjord cruise, two nights', quantity: 2, unitPrice: 14950 },
          { productId: null, description: 'Airport transfer', quantity: 1, unitPrice: 3500 },
        ]),
        total: 33400, currency: 'EUR', travel_date: '2027-06-01', notes: 'Window seats if possible',
      })
    }
    case 'customer':
      return toCustomer({
        ...base, id: _ID.cus, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0958',
        address: JSON.stringify({ line1: '12 St James Square', line2: null, city: 'London', region: null, postalCode: 'SW1Y 4JH', country: 'GB' }), notes: null,
      })
    case 'product':
      return toProduct({
        ...base, id: _ID.prd, name: 'Fjord cruise', description: 'Two nights on the Geirangerfjord', code: 'FJORD-2N', price: 14950,
        currency: 'EUR', duration_minutes: 2880, location: 'Geiranger, Norway', capacity: 24, active: 1,
      })
    case 'itinerary':
      return toItinerary({
        ...base, id: _ID.iti, title: 'Fjords in June', order_id: _ID.ord, customer_id: _ID.cus, start_date: '2027-06-01', end_date: '2027-06-02',
        days: JSON.stringify([
          { day: 1, date: '2027-06-01', title: 'Arrival and embarkation', description: 'Transfer from Ålesund airport', items: [] },
          { day: 2, date: '2027-06-02', title: 'Geirangerfjord', description: null, items: ['Seven Sisters waterfall', 'Dinner on board'] },
        ]),
      })
    case 'invoice': {
      const paid = event === 'invoice.paid'
      return toInvoice({
        ...base, id: _ID.inv, invoice_number: 'INV-000042', order_id: _ID.ord, customer_id: _ID.cus, status: paid ? 'paid' : 'open',
        lines: JSON.stringify([{ description: 'Fjord cruise, two nights', quantity: 2, unitPrice: 14950 }]),
        total: 29900, amount_paid: paid ? 29900 : 0, currency: 'EUR', due_date: '2027-05-01', paid_at: paid ? at : null,
      })
    }
    case 'payment': {
      const refunded = event === 'payment.refunded'
      return toPayment({
        ...base, id: _ID.pay, amount: 29900, currency: 'EUR', method: 'card', order_id: _ID.ord, invoice_id: _ID.inv, reference: 'ch_example',
        status: refunded ? 'partially_refunded' : 'received', refunded_amount: refunded ? 3500 : 0,
      })
    }
    case 'webhook':
      // webhook.disabled: a subscription whose receiver answered 410 Gone, as GET shows it once disabled.
      return toWebhook({
        id: _ID.wh, tenant_id: tenantId, url: 'https://example.com/hooks/travelops', events: JSON.stringify(['order.created', 'order.cancelled']),
        secret: '', headers: JSON.stringify({ 'X-Env': 'production' }), active: 0, retry_count: 3, created_at: at, updated_at: at,
        deleted_at: null, failing_since: at, disabled_at: at, disabled_reason: 'gone',
      })
    default:
      return toInquiry({
        ...base, id: _ID.inq, name: 'Grace Hopper', email: 'grace@example.com', phone: null, message: 'Is the June cruise still available for two?',
        product_id: _ID.prd, travel_date: '2027-06-01', travelers: 2, status: 'new',
      })
  }
}

/** Fixed ids, recognisable as examples (all zeros but the version and variant digits). */
const _ID = Object.fromEntries(['ord', 'cus', 'prd', 'iti', 'inv', 'pay', 'inq', 'wh'].map((p, i) => [p, `${p}_00000000-0000-7000-8000-00000000000${i + 1}`])) as
  Record<'ord' | 'cus' | 'prd' | 'iti' | 'inv' | 'pay' | 'inq' | 'wh', string>
