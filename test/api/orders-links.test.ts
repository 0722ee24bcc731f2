import assert from 'node:assert/strict'
import { orderBody } from '../helpers/app.ts'
import { eventScenarios, hasPaths, unknownId } from '../helpers/catalog.ts'
import type { Fixture } from '../helpers/scenario.ts'

interface F extends Fixture {
  ada: any // the tenant's customer with a phone
  bob: any // the tenant's customer without a phone
  theirs: any // the other tenant's customer
  product: any
  theirProduct: any
  order: any // the tenant's order linked to nobody, changed by PATCH rows
  linked: any // the tenant's order linked to ada, only no-op PATCHes
  doomed: any // a product deleted after an order named it
  doomedOrder: any
}

const noCustomer = (over: Record<string, unknown>) => {
  const b = orderBody(over)
  delete b.customer
  return b
}
const adaContact = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: '+44 20 0000 0000' }

eventScenarios<F>('orders: customerId and items[].productId', async (base) => {
  const post = async (t: typeof base.tenant, path: string, body: unknown) => {
    const r = await t.request('POST', path, { body })
    assert.equal(r.status, 201, r.text)
    return r.body.data
  }
  const ada = await post(base.tenant, '/v1/customers', { ...adaContact, email: 'ADA@example.com', notes: 'not copied' })
  const doomed = await post(base.tenant, '/v1/products', { name: 'Discontinued', price: 5, currency: 'EUR' })
  return {
    doomed,
    doomedOrder: await post(base.tenant, '/v1/orders', orderBody({ items: [{ productId: doomed.id, description: 'Old', quantity: 1, unitPrice: 5 }] })),
    ...base,
    ada,
    bob: await post(base.tenant, '/v1/customers', { firstName: 'Bob', lastName: 'Builder', email: 'bob@example.com' }),
    theirs: await post(base.other, '/v1/customers', { firstName: 'Eve', lastName: 'X', email: 'eve@example.com' }),
    product: await post(base.tenant, '/v1/products', { name: 'Fjord cruise', price: 149.5, currency: 'EUR' }),
    theirProduct: await post(base.other, '/v1/products', { name: 'Theirs', price: 1, currency: 'EUR' }),
    order: await post(base.tenant, '/v1/orders', orderBody()),
    linked: await post(base.tenant, '/v1/orders', noCustomer({ customerId: ada.id })),
  }
}, [
  {
    name: 'customerId alone: the customer is copied', method: 'POST', path: '/v1/orders', body: (f: F) => noCustomer({ customerId: f.ada.id }), status: 201, events: ['order.created'],
    check: (r, f) => {
      assert.equal(r.body.data.customerId, f.ada.id)
      assert.deepEqual(r.body.data.customer, adaContact)
    },
  },
  {
    name: 'a customer without phone is copied with phone null', method: 'POST', path: '/v1/orders', body: (f: F) => noCustomer({ customerId: f.bob.id }), status: 201, events: ['order.created'],
    check: (r) => assert.deepEqual(r.body.data.customer, { firstName: 'Bob', lastName: 'Builder', email: 'bob@example.com', phone: null }),
  },
  {
    name: "customerId and customer: the body's customer is kept", method: 'POST', path: '/v1/orders', body: (f: F) => orderBody({ customerId: f.ada.id }), status: 201, events: ['order.created'],
    check: (r, f) => {
      assert.equal(r.body.data.customerId, f.ada.id)
      assert.deepEqual(r.body.data.customer, { ...(orderBody().customer as object), phone: null })
    },
  },
  { name: 'customerId null with a customer', method: 'POST', path: '/v1/orders', body: orderBody({ customerId: null }), status: 201, events: ['order.created'], check: (r) => assert.equal(r.body.data.customerId, null) },
  { name: 'neither customer nor customerId', method: 'POST', path: '/v1/orders', body: noCustomer({}), status: 422, check: (r) => hasPaths(r, 'customer') },
  { name: 'customerId null and no customer', method: 'POST', path: '/v1/orders', body: noCustomer({ customerId: null }), status: 422, check: (r) => hasPaths(r, 'customer') },
  { name: "another tenant's customer", method: 'POST', path: '/v1/orders', body: (f: F) => noCustomer({ customerId: f.theirs.id }), status: 422, code: 'validation_failed', check: (r) => hasPaths(r, 'customerId') },
  { name: 'unknown customer', method: 'POST', path: '/v1/orders', body: orderBody({ customerId: unknownId('cus') }), status: 422, check: (r) => hasPaths(r, 'customerId') },
  { name: 'malformed customerId', method: 'POST', path: '/v1/orders', body: orderBody({ customerId: 'ada' }), status: 422, check: (r) => hasPaths(r, 'customerId') },
  {
    name: 'items name own products', method: 'POST', path: '/v1/orders', status: 201, events: ['order.created'],
    body: (f: F) => orderBody({ items: [{ productId: f.product.id, description: 'Cruise', quantity: 2, unitPrice: 149.5 }, { description: 'Tip', quantity: 1, unitPrice: 0.1 }] }),
    check: (r, f) => {
      assert.deepEqual(r.body.data.items.map((i: any) => i.productId), [f.product.id, null])
      assert.equal(r.body.data.total, 299.1)
    },
  },
  {
    name: "an item names another tenant's product", method: 'POST', path: '/v1/orders', status: 422,
    body: (f: F) => orderBody({ items: [{ description: 'ok', quantity: 1, unitPrice: 1 }, { productId: f.theirProduct.id, description: 'x', quantity: 1, unitPrice: 1 }] }),
    check: (r) => hasPaths(r, 'items[1].productId'),
  },
  {
    name: 'bad customer and bad product reported together', method: 'POST', path: '/v1/orders', status: 422,
    body: (f: F) => noCustomer({ customerId: f.theirs.id, items: [{ productId: unknownId('prd'), description: 'x', quantity: 1, unitPrice: 1 }] }),
    check: (r) => hasPaths(r, 'customerId', 'items[0].productId'),
  },
  { name: 'malformed productId', method: 'POST', path: '/v1/orders', body: orderBody({ items: [{ productId: 42, description: 'x', quantity: 1, unitPrice: 1 }] }), status: 422, check: (r) => hasPaths(r, 'items[0].productId') },
  { name: 'customerId filter', method: 'GET', path: (f) => `/v1/orders?customerId=${f.ada.id}`, status: 200, check: (r, f) => assert.ok(r.body.data.length >= 3 && r.body.data.every((o: any) => o.customerId === f.ada.id) && r.body.data.some((o: any) => o.id === f.linked.id)) },
  { name: "customerId filter with another tenant's customer", method: 'GET', path: (f) => `/v1/orders?customerId=${f.theirs.id}`, status: 200, check: (r) => assert.deepEqual(r.body.data, []) },

  {
    name: 'PATCH customerId links and copies', method: 'PATCH', path: (f) => `/v1/orders/${f.order.id}`, body: (f: F) => ({ customerId: f.bob.id }), status: 200, events: ['order.updated'],
    check: (r, f) => {
      assert.equal(r.body.data.customerId, f.bob.id)
      assert.deepEqual(r.body.data.customer, { firstName: 'Bob', lastName: 'Builder', email: 'bob@example.com', phone: null })
    },
  },
  {
    name: 'PATCH the same customerId again: nothing changes, no event', method: 'PATCH', path: (f) => `/v1/orders/${f.linked.id}`, body: (f: F) => ({ customerId: f.ada.id }), status: 200,
    check: (r, f) => assert.deepEqual(r.body.data, f.linked),
  },
  {
    name: 'PATCH customerId null unlinks and keeps the copy', method: 'PATCH', path: (f) => `/v1/orders/${f.order.id}`, body: { customerId: null }, status: 200, events: ['order.updated'],
    check: (r) => {
      assert.equal(r.body.data.customerId, null)
      assert.equal(r.body.data.customer.firstName, 'Bob')
    },
  },
  { name: "PATCH another tenant's customer", method: 'PATCH', path: (f) => `/v1/orders/${f.order.id}`, body: (f: F) => ({ customerId: f.theirs.id }), status: 422, check: (r) => hasPaths(r, 'customerId') },
  {
    name: "PATCH items with another tenant's product", method: 'PATCH', path: (f) => `/v1/orders/${f.order.id}`, status: 422,
    body: (f: F) => ({ items: [{ productId: f.theirProduct.id, description: 'x', quantity: 1, unitPrice: 1 }] }), check: (r) => hasPaths(r, 'items[0].productId'),
  },
  {
    name: 'PATCH items with an own product', method: 'PATCH', path: (f) => `/v1/orders/${f.order.id}`, status: 200, events: ['order.updated'],
    body: (f: F) => ({ items: [{ productId: f.product.id, description: 'Cruise', quantity: 1, unitPrice: 149.5 }] }),
    check: (r, f) => assert.equal(r.body.data.items[0].productId, f.product.id),
  },
  {
    name: 'the refused patches changed nothing', method: 'GET', path: (f) => `/v1/orders/${f.order.id}`, status: 200,
    check: (r, f) => {
      assert.equal(r.body.data.customerId, null)
      assert.equal(r.body.data.items[0].productId, f.product.id)
    },
  },
  { name: 'a product is deleted after an order named it', method: 'DELETE', path: (f) => `/v1/products/${f.doomed.id}`, status: 200 },
  {
    name: 'the order keeps its items editable with the deleted product', method: 'PATCH', path: (f) => `/v1/orders/${f.doomedOrder.id}`, status: 200, events: ['order.updated'],
    body: (f: F) => ({ items: [{ productId: f.doomed.id, description: 'Old', quantity: 3, unitPrice: 5 }] }),
    check: (r) => assert.equal(r.body.data.total, 15),
  },
  { name: 'a new order cannot name the deleted product', method: 'POST', path: '/v1/orders', body: (f: F) => orderBody({ items: [{ productId: f.doomed.id, description: 'Old', quantity: 1, unitPrice: 5 }] }), status: 422, check: (r) => hasPaths(r, 'items[0].productId') },
])
