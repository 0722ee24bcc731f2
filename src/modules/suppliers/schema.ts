import * as v from 'valibot'
import { Address, LowerEmail, Metadata, Phone, optionalText, text, type AddressValue } from '../fields.ts'

export const SUPPLIER_TYPES = ['hotel', 'transport', 'guide', 'activity', 'other'] as const
export type SupplierType = (typeof SUPPLIER_TYPES)[number]

const entries = {
  name: text(200),
  type: v.picklist(SUPPLIER_TYPES, `must be one of ${SUPPLIER_TYPES.join(', ')}`),
  email: v.optional(v.nullable(LowerEmail)),
  phone: v.optional(v.nullable(Phone)),
  address: v.optional(v.nullable(Address)),
  notes: optionalText(5000),
  metadata: v.optional(v.nullable(Metadata)),
}

export const CreateSupplierBody = v.strictObject(entries)

export const UpdateSupplierBody = v.strictObject({
  ...entries,
  name: v.optional(entries.name),
  type: v.optional(entries.type),
})

export const SUPPLIER_READ_ONLY = ['id', 'createdAt', 'updatedAt', 'tenantId'] as const

export type CreateSupplierInput = v.InferOutput<typeof CreateSupplierBody>
export type UpdateSupplierInput = v.InferOutput<typeof UpdateSupplierBody>

/** The supplier as the API shows it. */
export interface Supplier {
  id: string
  name: string
  type: SupplierType
  email: string | null
  phone: string | null
  address: AddressValue | null
  notes: string | null
  metadata: Record<string, string>
  createdAt: string
  updatedAt: string
}
