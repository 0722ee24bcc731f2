import * as v from 'valibot'
import { BoolQuery, Currency, Int, Metadata, Money, optionalText, text } from '../fields.ts'
import * as out from '../view-fields.ts'

/** A product code: letters, digits and `._-`, unique per tenant; compared exactly (case-sensitive). */
export const ProductCode = v.pipe(
  v.string(),
  v.trim(),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1–64 letters, digits, dots, dashes or underscores, starting with a letter or digit'),
)

const entries = {
  name: text(200),
  description: optionalText(5000),
  code: v.optional(v.nullable(ProductCode)),
  price: Money,
  currency: Currency,
  durationMinutes: v.optional(v.nullable(Int(1, 525_600))),
  location: optionalText(200),
  capacity: v.optional(v.nullable(Int(1, 1_000_000))),
  active: v.optional(v.boolean(), true),
  metadata: v.optional(v.nullable(Metadata)),
}

export const CreateProductBody = v.strictObject(entries)

export const UpdateProductBody = v.strictObject({
  ...entries,
  name: v.optional(entries.name),
  price: v.optional(entries.price),
  currency: v.optional(entries.currency),
  active: v.optional(v.boolean()),
})

export const PRODUCT_READ_ONLY = ['id', 'createdAt', 'updatedAt', 'tenantId'] as const

export const ListProductsQuery = {
  active: v.optional(BoolQuery),
}

export type CreateProductInput = v.InferOutput<typeof CreateProductBody>
export type UpdateProductInput = v.InferOutput<typeof UpdateProductBody>

/** The product as the API shows it; `price` in major units of `currency`. */
export const ProductView = v.pipe(
  v.strictObject({
    id: out.id('prd'),
    name: v.string(),
    description: out.optionalText(),
    code: out.optionalText('Your code for the product, unique per tenant (letters, digits, `.`, `_`, `-`)'),
    price: out.Money,
    currency: out.Currency,
    durationMinutes: v.nullable(out.Int(1)),
    location: out.optionalText(),
    capacity: v.nullable(out.Int(1)),
    active: v.boolean(),
    metadata: out.Metadata,
    createdAt: out.createdAt,
    updatedAt: out.updatedAt,
  }),
  v.title('Product'),
  v.description('A product (tour) as the API returns it (GET, the answers of writes, and the `data` of product events)'),
)

export type Product = v.InferOutput<typeof ProductView>
