import { defineRoute, type RouteDef } from '../../http/define-route.ts'
import { toPage } from '../../http/pagination.ts'
import { CreateProductBody, ListProductsQuery, PRODUCT_READ_ONLY, ProductView, UpdateProductBody } from './schema.ts'
import * as products from './service.ts'

const read = { resource: 'products', action: 'read' } as const
const write = { resource: 'products', action: 'write' } as const
const tag = 'Products'
const params = { id: 'prd' } as const

export const productRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET', path: '/v1/products', scope: read, tag, summary: 'List products, newest first', list: true, query: ListProductsQuery,
    response: ProductView,
    handler: async ({ ctx, query }) => toPage(await products.listProducts(ctx, query), query.limit, products.toProduct, products.productJson),
  }),
  defineRoute({
    method: 'POST', path: '/v1/products', scope: write, tag, summary: 'Create a product', status: 201,
    body: CreateProductBody, readOnly: PRODUCT_READ_ONLY, events: ['product.created'],
    response: ProductView,
    handler: ({ ctx, body }) => products.createProduct(ctx, body),
  }),
  defineRoute({
    method: 'GET', path: '/v1/products/:id', scope: read, tag, summary: 'Read a product', params,
    response: ProductView,
    handler: ({ ctx, params }) => products.getProduct(ctx, params.id!),
  }),
  defineRoute({
    method: 'PATCH', path: '/v1/products/:id', scope: write, tag, summary: 'Update a product', params,
    body: UpdateProductBody, readOnly: PRODUCT_READ_ONLY, events: ['product.updated'],
    response: ProductView,
    handler: ({ ctx, params, body }) => products.updateProduct(ctx, params.id!, body),
  }),
  defineRoute({
    method: 'DELETE', path: '/v1/products/:id', scope: write, tag, summary: 'Delete a product', params,
    handler: ({ ctx, params }) => products.deleteProduct(ctx, params.id!),
  }),
]
