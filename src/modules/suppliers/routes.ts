import { defineRoute, type RouteDef } from '../../http/define-route.ts'
import { toPage } from '../../http/pagination.ts'
import { CreateSupplierBody, SUPPLIER_READ_ONLY, SupplierView, UpdateSupplierBody } from './schema.ts'
import * as suppliers from './service.ts'

const read = { resource: 'suppliers', action: 'read' } as const
const write = { resource: 'suppliers', action: 'write' } as const
const tag = 'Suppliers'
const params = { id: 'sup' } as const

export const supplierRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET', path: '/v1/suppliers', scope: read, tag, summary: 'List suppliers, newest first', list: true,
    response: SupplierView,
    handler: async ({ ctx, query }) => toPage(await suppliers.listSuppliers(ctx, query), query.limit, suppliers.toSupplier, suppliers.supplierJson),
  }),
  defineRoute({
    method: 'POST', path: '/v1/suppliers', scope: write, tag, summary: 'Create a supplier', status: 201,
    body: CreateSupplierBody, readOnly: SUPPLIER_READ_ONLY,
    response: SupplierView,
    handler: ({ ctx, body }) => suppliers.createSupplier(ctx, body),
  }),
  defineRoute({
    method: 'GET', path: '/v1/suppliers/:id', scope: read, tag, summary: 'Read a supplier', params,
    response: SupplierView,
    handler: ({ ctx, params }) => suppliers.getSupplier(ctx, params.id!),
  }),
  defineRoute({
    method: 'PATCH', path: '/v1/suppliers/:id', scope: write, tag, summary: 'Update a supplier', params,
    body: UpdateSupplierBody, readOnly: SUPPLIER_READ_ONLY,
    response: SupplierView,
    handler: ({ ctx, params, body }) => suppliers.updateSupplier(ctx, params.id!, body),
  }),
  defineRoute({
    method: 'DELETE', path: '/v1/suppliers/:id', scope: write, tag, summary: 'Delete a supplier', params,
    handler: ({ ctx, params }) => suppliers.deleteSupplier(ctx, params.id!),
  }),
]
