import { defineRoute, type RouteDef } from '../../http/define-route.ts'
import { toPage } from '../../http/pagination.ts'
import { CreateCustomerBody, CUSTOMER_READ_ONLY, CustomerView, ListCustomersQuery, UpdateCustomerBody } from './schema.ts'
import * as customers from './service.ts'

const read = { resource: 'customers', action: 'read' } as const
const write = { resource: 'customers', action: 'write' } as const
const tag = 'Customers'
const params = { id: 'cus' } as const

export const customerRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET', path: '/v1/customers', scope: read, tag, summary: 'List customers, newest first', list: true, query: ListCustomersQuery,
    response: CustomerView,
    handler: async ({ ctx, query }) => toPage(await customers.listCustomers(ctx, query), query.limit, customers.toCustomer, customers.customerJson),
  }),
  defineRoute({
    method: 'POST', path: '/v1/customers', scope: write, tag, summary: 'Create a customer', status: 201,
    body: CreateCustomerBody, readOnly: CUSTOMER_READ_ONLY, events: ['customer.created'],
    response: CustomerView,
    handler: ({ ctx, body }) => customers.createCustomer(ctx, body),
  }),
  defineRoute({
    method: 'GET', path: '/v1/customers/:id', scope: read, tag, summary: 'Read a customer', params,
    response: CustomerView,
    handler: ({ ctx, params }) => customers.getCustomer(ctx, params.id!),
  }),
  defineRoute({
    method: 'PATCH', path: '/v1/customers/:id', scope: write, tag, summary: 'Update a customer', params,
    body: UpdateCustomerBody, readOnly: CUSTOMER_READ_ONLY, events: ['customer.updated'],
    response: CustomerView,
    handler: ({ ctx, params, body }) => customers.updateCustomer(ctx, params.id!, body),
  }),
  defineRoute({
    method: 'DELETE', path: '/v1/customers/:id', scope: write, tag, summary: 'Delete a customer', params,
    handler: ({ ctx, params }) => customers.deleteCustomer(ctx, params.id!),
  }),
]
