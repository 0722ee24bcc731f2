import * as v from 'valibot'
import { CalendarDate, IdRef, Int, LowerEmail, Metadata, Phone, optionalText, text } from '../fields.ts'

export const INQUIRY_STATUSES = ['new', 'responded', 'closed'] as const
export type InquiryStatus = (typeof INQUIRY_STATUSES)[number]

const entries = {
  name: text(200),
  email: LowerEmail,
  phone: v.optional(v.nullable(Phone)),
  message: text(10_000),
  productId: v.optional(v.nullable(IdRef('prd'))),
  travelDate: v.optional(v.nullable(CalendarDate)),
  travelers: v.optional(v.nullable(Int(1, 10_000))),
  metadata: v.optional(v.nullable(Metadata)),
}

/** An inquiry always starts as `new`; `status` is read-only on create. */
export const CreateInquiryBody = v.strictObject(entries)

/** Any status may follow any other (a closed inquiry can be reopened). */
export const UpdateInquiryBody = v.strictObject({
  ...entries,
  name: v.optional(entries.name),
  email: v.optional(entries.email),
  message: v.optional(entries.message),
  status: v.optional(v.picklist(INQUIRY_STATUSES, `must be one of ${INQUIRY_STATUSES.join(', ')}`)),
})

export const INQUIRY_READ_ONLY = ['id', 'createdAt', 'updatedAt', 'tenantId', 'status'] as const
export const INQUIRY_PATCH_READ_ONLY = INQUIRY_READ_ONLY.filter((f) => f !== 'status')

export type CreateInquiryInput = v.InferOutput<typeof CreateInquiryBody>
export type UpdateInquiryInput = v.InferOutput<typeof UpdateInquiryBody>

/** The inquiry as the API shows it. */
export interface Inquiry {
  id: string
  name: string
  email: string
  phone: string | null
  message: string
  productId: string | null
  travelDate: string | null
  travelers: number | null
  status: InquiryStatus
  metadata: Record<string, string>
  createdAt: string
  updatedAt: string
}
