import { defineRoute, EmptyBody, type RouteDef } from '../../http/define-route.ts'
import { toPage } from '../../http/pagination.ts'
import { CreateOrderBody, ListOrdersQuery, ORDER_PATCH_READ_ONLY, ORDER_READ_ONLY, OrderView, UpdateOrderBody } from './schema.ts'
import * as orders from './service.ts'

const read = { resource: 'orders', action: 'read' } as const
const write = { resource: 'orders', action: 'write' } as const
const tag = 'Orders'
const params = { id: 'ord' } as const

export const orderRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET', path: '/v1/orders', scope: read, tag, summary: 'List orders, newest first', list: true, query: ListOrdersQuery,
    response: OrderView,
    handler: async ({ ctx, query }) => toPage(await orders.listOrders(ctx, query), query.limit, orders.toOrder, orders.orderJson),
  }),
  defineRoute({
    method: 'POST', path: '/v1/orders', scope: write, tag, summary: 'Create an order', status: 201,
    rules: ['a total of `items` (quantity × unitPrice) over 10^13 minor units of `currency` (422 at `items`)', 'a `unitPrice` with more decimals than `currency` has (422)'],
    body: CreateOrderBody, readOnly: ORDER_READ_ONLY, events: ['order.created'],
    response: OrderView,
    handler: ({ ctx, body }) => orders.createOrder(ctx, body),
  }),
  defineRoute({
    method: 'GET', path: '/v1/orders/:id', scope: read, tag, summary: 'Read an order', params,
    response: OrderView,
    handler: ({ ctx, params }) => orders.getOrder(ctx, params.id!),
  }),
  defineRoute({
    method: 'PATCH', path: '/v1/orders/:id', scope: write, tag, summary: 'Update an order', params,
    rules: ['a total of `items` (quantity × unitPrice) over 10^13 minor units of `currency` (422 at `items`)', 'a `unitPrice` with more decimals than `currency` has (422)'],
    body: UpdateOrderBody, readOnly: ORDER_PATCH_READ_ONLY, events: ['order.updated', 'order.confirmed', 'order.cancelled'],
    response: OrderView,
    handler: ({ ctx, params, body }) => orders.updateOrder(ctx, params.id!, body),
  }),
  defineRoute({
    method: 'DELETE', path: '/v1/orders/:id', scope: write, tag, summary: 'Delete an order', params,
    handler: ({ ctx, params }) => orders.deleteOrder(ctx, params.id!),
  }),
  defineRoute({
    method: 'POST', path: '/v1/orders/:id/confirm', scope: write, tag, summary: 'Confirm a pending order', params,
    body: EmptyBody, events: ['order.confirmed', 'order.updated'],
    response: OrderView,
    handler: ({ ctx, params }) => orders.transitionOrder(ctx, params.id!, 'confirmed'),
  }),
  defineRoute({
    method: 'POST', path: '/v1/orders/:id/cancel', scope: write, tag, summary: 'Cancel a pending or confirmed order', params,
    body: EmptyBody, events: ['order.cancelled', 'order.updated'],
    response: OrderView,
    handler: ({ ctx, params }) => orders.transitionOrder(ctx, params.id!, 'cancelled'),
  }),
]
