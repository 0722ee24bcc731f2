import { defineRoute, type RouteDef } from '../../http/define-route.ts'
import { toPage } from '../../http/pagination.ts'
import { CreateInquiryBody, INQUIRY_PATCH_READ_ONLY, INQUIRY_READ_ONLY, InquiryView, UpdateInquiryBody } from './schema.ts'
import * as inquiries from './service.ts'

const read = { resource: 'inquiries', action: 'read' } as const
const write = { resource: 'inquiries', action: 'write' } as const
const tag = 'Inquiries'
const params = { id: 'inq' } as const

export const inquiryRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET', path: '/v1/inquiries', scope: read, tag, summary: 'List inquiries, newest first', list: true,
    response: InquiryView,
    handler: async ({ ctx, query }) => toPage(await inquiries.listInquiries(ctx, query), query.limit, inquiries.toInquiry, inquiries.inquiryJson),
  }),
  defineRoute({
    method: 'POST', path: '/v1/inquiries', scope: write, tag, summary: 'Create an inquiry (status new)', status: 201,
    body: CreateInquiryBody, readOnly: INQUIRY_READ_ONLY, events: ['inquiry.created'],
    response: InquiryView,
    handler: ({ ctx, body }) => inquiries.createInquiry(ctx, body),
  }),
  defineRoute({
    method: 'GET', path: '/v1/inquiries/:id', scope: read, tag, summary: 'Read an inquiry', params,
    response: InquiryView,
    handler: ({ ctx, params }) => inquiries.getInquiry(ctx, params.id!),
  }),
  defineRoute({
    method: 'PATCH', path: '/v1/inquiries/:id', scope: write, tag, summary: 'Update an inquiry, including its status', params,
    body: UpdateInquiryBody, readOnly: INQUIRY_PATCH_READ_ONLY,
    response: InquiryView,
    handler: ({ ctx, params, body }) => inquiries.updateInquiry(ctx, params.id!, body),
  }),
  defineRoute({
    method: 'DELETE', path: '/v1/inquiries/:id', scope: write, tag, summary: 'Delete an inquiry', params,
    handler: ({ ctx, params }) => inquiries.deleteInquiry(ctx, params.id!),
  }),
]
