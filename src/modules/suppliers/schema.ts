import * as v from 'valibot'
import { Address, LowerEmail, Metadata, Phone, optionalText, text } from '../fields.ts'
import * as out from '../view-fields.ts'

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
export const SupplierView = v.pipe(
  v.strictObject({
    id: out.id('sup'),
    name: v.string(),
    type: v.picklist(SUPPLIER_TYPES),
    email: v.pipe(v.nullable(out.Email), v.description('Stored in lower case')),
    phone: out.optionalText(),
    address: v.nullable(out.AddressView),
    notes: out.optionalText(),
    metadata: out.Metadata,
    createdAt: out.createdAt,
    updatedAt: out.updatedAt,
  }),
  v.title('Supplier'),
  v.description('A supplier as the API returns it'),
)

export type Supplier = v.InferOutput<typeof SupplierView>
