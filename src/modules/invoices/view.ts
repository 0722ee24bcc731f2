import type { InvoiceRow } from '../../db/schema.ts'
import { validationFailed, type ErrorDetail } from '../../http/errors.ts'
import { MAX_MINOR, toMajor } from '../../lib/money.ts'
import { minorAt, parseJson } from '../fields.ts'
import type { Invoice, InvoiceLineValue, InvoiceStatus } from './schema.ts'

/** A line as stored: the unit price in minor units; its total is derived. */
export interface StoredLine {
  description: string
  quantity: number
  unitPrice: number
}

export function toInvoice(row: InvoiceRow): Invoice {
  const lines = JSON.parse(row.lines) as StoredLine[]
  return {
    id: row.id,
    invoiceNumber: row.invoice_number,
    status: row.status as InvoiceStatus,
    orderId: row.order_id,
    customerId: row.customer_id,
    lines: lines.map((l) => ({
      description: l.description,
      quantity: l.quantity,
      unitPrice: toMajor(l.unitPrice, row.currency),
      total: toMajor(l.unitPrice * l.quantity, row.currency),
    })),
    total: toMajor(row.total, row.currency),
    amountPaid: toMajor(row.amount_paid, row.currency),
    currency: row.currency,
    dueDate: row.due_date,
    paidAt: row.paid_at,
    metadata: parseJson<Record<string, string>>(row.metadata) ?? {},
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

/** Converts line prices to minor units of the currency and sums them exactly; 422 on excess decimals. */
export function priceLines(lines: readonly InvoiceLineValue[], currency: string): { lines: string; total: number } {
  const details: ErrorDetail[] = []
  const stored: StoredLine[] = lines.map((l, i) => ({
    description: l.description,
    quantity: l.quantity,
    unitPrice: minorAt(l.unitPrice, currency, `lines[${i}].unitPrice`, details),
  }))
  if (details.length) throw validationFailed(details)
  const total = stored.reduce((sum, l) => sum + l.unitPrice * l.quantity, 0)
  if (total > MAX_MINOR) throw validationFailed([{ path: 'lines', message: 'invoice total is too large' }])
  return { lines: JSON.stringify(stored), total }
}

/** The stored lines in major units of their currency, as a PATCH body would give them. */
export function linesInMajor(row: InvoiceRow): InvoiceLineValue[] {
  return (JSON.parse(row.lines) as StoredLine[]).map((l) => ({ ...l, unitPrice: toMajor(l.unitPrice, row.currency) }))
}
