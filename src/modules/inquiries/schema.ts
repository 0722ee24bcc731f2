import * as v from 'valibot'
import { CalendarDate, IdRef, Int, LowerEmail, Metadata, Phone, optionalText, text } from '../fields.ts'
import * as out from '../view-fields.ts'

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
export const InquiryView = v.pipe(
  v.strictObject({
    id: out.id('inq'),
    name: v.string(),
    email: v.pipe(out.Email, v.description('Stored in lower case')),
    phone: out.optionalText(),
    message: v.string(),
    productId: out.ref('prd', 'The product asked about, if any'),
    travelDate: out.optionalDate('Wished date of travel, if given'),
    travelers: v.nullable(out.Int(1)),
    status: v.pipe(v.picklist(INQUIRY_STATUSES), v.description('`new` on create; PATCH may set any of them')),
    metadata: out.Metadata,
    createdAt: out.createdAt,
    updatedAt: out.updatedAt,
  }),
  v.title('Inquiry'),
  v.description('An inquiry as the API returns it (GET, the answers of writes, and the `data` of inquiry.created)'),
)

export type Inquiry = v.InferOutput<typeof InquiryView>
