import * as v from 'valibot'
import { CalendarDate, Currency, Email, IdRef, Metadata, Money, Phone, Quantity, TimestampQuery, optionalText, text } from '../fields.ts'

export const ORDER_STATUSES = ['pending', 'confirmed', 'cancelled', 'completed'] as const
export type OrderStatus = (typeof ORDER_STATUSES)[number]

export const OrderCustomer = v.strictObject({
  firstName: text(100),
  lastName: text(100),
  email: Email,
  phone: v.optional(v.nullable(Phone)),
})

export const OrderItemInput = v.strictObject({
  description: text(500),
  quantity: Quantity,
  unitPrice: Money,
})

export const CreateOrderBody = v.strictObject({
  customer: OrderCustomer,
  items: v.pipe(v.array(OrderItemInput), v.minLength(1, 'must have at least one item'), v.maxLength(100, 'must have at most 100 items')),
  currency: Currency,
  travelDate: v.optional(v.nullable(CalendarDate)),
  notes: optionalText(5000),
  metadata: v.optional(v.nullable(Metadata)),
})

export const UpdateOrderBody = v.strictObject({
  customer: v.optional(OrderCustomer),
  items: v.optional(CreateOrderBody.entries.items),
  currency: v.optional(Currency),
  travelDate: v.optional(v.nullable(CalendarDate)),
  notes: optionalText(5000),
  metadata: v.optional(v.nullable(Metadata)),
  status: v.optional(v.picklist(ORDER_STATUSES, `must be one of ${ORDER_STATUSES.join(', ')}`)),
})

export const ORDER_READ_ONLY = ['id', 'orderNumber', 'total', 'createdAt', 'updatedAt', 'status', 'tenantId'] as const
export const ORDER_PATCH_READ_ONLY = ORDER_READ_ONLY.filter((f) => f !== 'status')

export const ListOrdersQuery = {
  status: v.optional(v.picklist(ORDER_STATUSES, `must be one of ${ORDER_STATUSES.join(', ')}`)),
  customerId: v.optional(IdRef('cus')),
  createdAfter: v.optional(TimestampQuery),
  createdBefore: v.optional(TimestampQuery),
}

export type CreateOrderInput = v.InferOutput<typeof CreateOrderBody>
export type UpdateOrderInput = v.InferOutput<typeof UpdateOrderBody>
export type OrderCustomerValue = v.InferOutput<typeof OrderCustomer>

/** The order as the API shows it. */
export interface Order {
  id: string
  orderNumber: string
  status: OrderStatus
  customerId: string | null
  customer: OrderCustomerValue
  items: { productId: string | null; description: string; quantity: number; unitPrice: number; total: number }[]
  total: number
  currency: string
  travelDate: string | null
  notes: string | null
  metadata: Record<string, string>
  createdAt: string
  updatedAt: string
}
