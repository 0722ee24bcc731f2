import type { InvoiceRow } from '../../db/schema.ts'
import { InvalidError, type ErrorDetail } from '../../lib/errors.ts'
import { jsonString } from '../../lib/json.ts'
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
  return {
    id: row.id,
    invoiceNumber: row.invoice_number,
    status: row.status as InvoiceStatus,
    orderId: row.order_id,
    customerId: row.customer_id,
    lines: _lines(row),
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

/**
 * `JSON.stringify(toInvoice(row))` written straight from the row: the metadata passed through as
 * stored (JSON.stringify's own output, which re-parsing and re-serialising gives back byte for
 * byte), the lines converted to major units as toInvoice() does. Checked against toInvoice() on
 * random rows (test/unit/record-json.test.ts).
 */
export function invoiceJson(row: InvoiceRow): string {
  return `{"id":${JSON.stringify(row.id)},"invoiceNumber":${JSON.stringify(row.invoice_number)},"status":${JSON.stringify(row.status)},"orderId":${jsonString(row.order_id)},"customerId":${jsonString(row.customer_id)},"lines":${JSON.stringify(_lines(row))},"total":${toMajor(row.total, row.currency)},"amountPaid":${toMajor(row.amount_paid, row.currency)},"currency":${JSON.stringify(row.currency)},"dueDate":${jsonString(row.due_date)},"paidAt":${jsonString(row.paid_at)},"metadata":${row.metadata ?? '{}'},"createdAt":${JSON.stringify(row.created_at)},"updatedAt":${JSON.stringify(row.updated_at)}}`
}

/** The stored lines as the API shows them: prices in major units, each with its total. */
function _lines(row: InvoiceRow): Invoice['lines'] {
  return (JSON.parse(row.lines) as StoredLine[]).map((l) => ({
    description: l.description,
    quantity: l.quantity,
    unitPrice: toMajor(l.unitPrice, row.currency),
    total: toMajor(l.unitPrice * l.quantity, row.currency),
  }))
}

/** Converts line prices to minor units of the currency and sums them exactly; 422 on excess decimals. */
export function priceLines(lines: readonly InvoiceLineValue[], currency: string): { lines: string; total: number } {
  const details: ErrorDetail[] = []
  const stored: StoredLine[] = lines.map((l, i) => ({
    description: l.description,
    quantity: l.quantity,
    unitPrice: minorAt(l.unitPrice, currency, `lines[${i}].unitPrice`, details),
  }))
  if (details.length) throw new InvalidError(details)
  const total = stored.reduce((sum, l) => sum + l.unitPrice * l.quantity, 0)
  if (total > MAX_MINOR) throw new InvalidError([{ path: 'lines', message: 'invoice total is too large' }])
  return { lines: JSON.stringify(stored), total }
}

/** The stored lines in major units of their currency, as a PATCH body would give them. */
export function linesInMajor(row: InvoiceRow): InvoiceLineValue[] {
  return (JSON.parse(row.lines) as StoredLine[]).map((l) => ({ ...l, unitPrice: toMajor(l.unitPrice, row.currency) }))
}
