import * as v from 'valibot'
import { Address, EmailQuery, LowerEmail, Metadata, Phone, optionalText, text } from '../fields.ts'
import * as out from '../view-fields.ts'

const entries = {
  firstName: text(100),
  lastName: text(100),
  email: LowerEmail,
  phone: v.optional(v.nullable(Phone)),
  address: v.optional(v.nullable(Address)),
  notes: optionalText(5000),
  metadata: v.optional(v.nullable(Metadata)),
}

export const CreateCustomerBody = v.strictObject(entries)

export const UpdateCustomerBody = v.strictObject({
  ...entries,
  firstName: v.optional(entries.firstName),
  lastName: v.optional(entries.lastName),
  email: v.optional(entries.email),
})

export const CUSTOMER_READ_ONLY = ['id', 'createdAt', 'updatedAt', 'tenantId'] as const

/** `email` matches exactly after lower-casing (emails are stored in lower case). */
export const ListCustomersQuery = {
  email: v.optional(EmailQuery),
}

export type CreateCustomerInput = v.InferOutput<typeof CreateCustomerBody>
export type UpdateCustomerInput = v.InferOutput<typeof UpdateCustomerBody>

/** The customer as the API shows it. */
export const CustomerView = v.pipe(
  v.strictObject({
    id: out.id('cus'),
    firstName: v.string(),
    lastName: v.string(),
    email: v.pipe(out.Email, v.description('Stored in lower case')),
    phone: out.optionalText(),
    address: v.nullable(out.AddressView),
    notes: out.optionalText(),
    metadata: out.Metadata,
    createdAt: out.createdAt,
    updatedAt: out.updatedAt,
  }),
  v.title('Customer'),
  v.description('A customer as the API returns it (GET, the answers of writes, and the `data` of customer events)'),
)

export type Customer = v.InferOutput<typeof CustomerView>

/** What an order copies from its customer. */
export interface CustomerContact {
  firstName: string
  lastName: string
  email: string
  phone?: string
}
