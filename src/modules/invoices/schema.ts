import * as v from 'valibot'
import { CalendarDate, Currency, IdRef, Metadata, Money, Quantity, text } from '../fields.ts'

export const INVOICE_STATUSES = ['open', 'paid', 'void'] as const
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number]

export const InvoiceLineInput = v.strictObject({
  description: text(500),
  quantity: Quantity,
  unitPrice: Money,
})

export const CreateInvoiceBody = v.strictObject({
  orderId: v.optional(v.nullable(IdRef('ord'))),
  customerId: v.optional(v.nullable(IdRef('cus'))),
  lines: v.pipe(v.array(InvoiceLineInput), v.minLength(1, 'must have at least one line'), v.maxLength(100, 'must have at most 100 lines')),
  currency: Currency,
  dueDate: v.optional(v.nullable(CalendarDate)),
  metadata: v.optional(v.nullable(Metadata)),
})

export const UpdateInvoiceBody = v.strictObject({
  orderId: v.optional(v.nullable(IdRef('ord'))),
  customerId: v.optional(v.nullable(IdRef('cus'))),
  lines: v.optional(CreateInvoiceBody.entries.lines),
  currency: v.optional(Currency),
  dueDate: v.optional(v.nullable(CalendarDate)),
  metadata: v.optional(v.nullable(Metadata)),
  /** Only `void` (from `open`) is a move PATCH makes; `paid` comes from /pay or payments. */
  status: v.optional(v.picklist(INVOICE_STATUSES, `must be one of ${INVOICE_STATUSES.join(', ')}`)),
})

export const INVOICE_READ_ONLY = ['id', 'invoiceNumber', 'total', 'amountPaid', 'paidAt', 'createdAt', 'updatedAt', 'status', 'tenantId'] as const
export const INVOICE_PATCH_READ_ONLY = INVOICE_READ_ONLY.filter((f) => f !== 'status')

export const ListInvoicesQuery = {
  status: v.optional(v.picklist(INVOICE_STATUSES, `must be one of ${INVOICE_STATUSES.join(', ')}`)),
  orderId: v.optional(IdRef('ord')),
}

export type CreateInvoiceInput = v.InferOutput<typeof CreateInvoiceBody>
export type UpdateInvoiceInput = v.InferOutput<typeof UpdateInvoiceBody>
export type InvoiceLineValue = v.InferOutput<typeof InvoiceLineInput>

/** The invoice as the API shows it. */
export interface Invoice {
  id: string
  invoiceNumber: string
  status: InvoiceStatus
  orderId: string | null
  customerId: string | null
  lines: { description: string; quantity: number; unitPrice: number; total: number }[]
  total: number
  amountPaid: number
  currency: string
  dueDate: string | null
  paidAt: string | null
  metadata: Record<string, string>
  createdAt: string
  updatedAt: string
}
