import { defineRoute, EmptyBody, type RouteDef } from '../../http/define-route.ts'
import { toPage } from '../../http/pagination.ts'
import { CreateInvoiceBody, INVOICE_PATCH_READ_ONLY, INVOICE_READ_ONLY, InvoiceView, ListInvoicesQuery, UpdateInvoiceBody } from './schema.ts'
import * as invoices from './service.ts'
import { invoiceJson, toInvoice } from './view.ts'

const read = { resource: 'invoices', action: 'read' } as const
const write = { resource: 'invoices', action: 'write' } as const
const tag = 'Invoices'
const params = { id: 'inv' } as const

export const invoiceRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET', path: '/v1/invoices', scope: read, tag, summary: 'List invoices, newest first', list: true, query: ListInvoicesQuery,
    response: InvoiceView,
    handler: async ({ ctx, query }) => toPage(await invoices.listInvoices(ctx, query), query.limit, toInvoice, invoiceJson),
  }),
  defineRoute({
    method: 'POST', path: '/v1/invoices', scope: write, tag, summary: 'Create an open invoice', status: 201,
    rules: ['a total of `lines` (quantity × unitPrice) over 10^13 minor units of `currency` (422 at `lines`)', 'a `unitPrice` with more decimals than `currency` has (422)'],
    body: CreateInvoiceBody, readOnly: INVOICE_READ_ONLY, events: ['invoice.created'],
    response: InvoiceView,
    handler: ({ ctx, body }) => invoices.createInvoice(ctx, body),
  }),
  defineRoute({
    method: 'GET', path: '/v1/invoices/:id', scope: read, tag, summary: 'Read an invoice', params,
    response: InvoiceView,
    handler: ({ ctx, params }) => invoices.getInvoice(ctx, params.id!),
  }),
  defineRoute({
    method: 'PATCH', path: '/v1/invoices/:id', scope: write, tag, summary: 'Update an open invoice, or void it', params,
    rules: ['a total of `lines` (quantity × unitPrice) over 10^13 minor units of `currency` (422 at `lines`)', 'a `unitPrice` with more decimals than `currency` has (422)'],
    body: UpdateInvoiceBody, readOnly: INVOICE_PATCH_READ_ONLY, events: ['invoice.paid'],
    response: InvoiceView,
    handler: ({ ctx, params, body }) => invoices.updateInvoice(ctx, params.id!, body),
  }),
  defineRoute({
    method: 'DELETE', path: '/v1/invoices/:id', scope: write, tag, summary: 'Delete an invoice with nothing paid on it', params,
    handler: ({ ctx, params }) => invoices.deleteInvoice(ctx, params.id!),
  }),
  defineRoute({
    method: 'POST', path: '/v1/invoices/:id/pay', scope: write, tag, summary: 'Mark an open invoice paid (balance settled outside travelops)', params,
    body: EmptyBody, events: ['invoice.paid'],
    response: InvoiceView,
    handler: ({ ctx, params }) => invoices.payInvoice(ctx, params.id!),
  }),
]
