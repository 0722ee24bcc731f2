import * as v from 'valibot'
import { CalendarDate, Currency, IdRef, Metadata, Money, Quantity, text } from '../fields.ts'
import * as out from '../view-fields.ts'

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
export const InvoiceView = v.pipe(
  v.strictObject({
    id: out.id('inv'),
    invoiceNumber: v.pipe(v.string(), v.regex(/^INV-\d{6,}$/), v.description('Per-tenant sequence, `INV-000001`')),
    status: v.pipe(v.picklist(INVOICE_STATUSES), v.description('`open`, then `paid` or `void` (both final)')),
    orderId: out.ref('ord', 'The order invoiced, if any'),
    customerId: out.ref('cus', 'The customer invoiced, if any'),
    lines: v.array(v.strictObject({
      description: v.string(),
      quantity: out.Int(1),
      unitPrice: out.Money,
      total: v.pipe(out.Money, v.description('`quantity × unitPrice`, in major units of `currency`')),
    })),
    total: v.pipe(out.Money, v.description('Sum of the lines\' totals, in major units of `currency`')),
    amountPaid: v.pipe(out.Money, v.description('Received and kept so far: payments add to it, refunds take from it')),
    currency: out.Currency,
    dueDate: out.optionalDate('When payment is due, if set'),
    paidAt: out.optionalTimestamp('When the invoice became `paid`; `null` until then'),
    metadata: out.Metadata,
    createdAt: out.createdAt,
    updatedAt: out.updatedAt,
  }),
  v.title('Invoice'),
  v.description('An invoice as the API returns it (GET, the answers of writes, and the `data` of invoice events)'),
)

export type Invoice = v.InferOutput<typeof InvoiceView>
