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
  productId: v.optional(v.nullable(IdRef('prd'))),
  description: text(500),
  quantity: Quantity,
  unitPrice: Money,
})

const OrderItems = v.pipe(v.array(OrderItemInput), v.minLength(1, 'must have at least one item'), v.maxLength(100, 'must have at most 100 items'))

/**
 * `customer` is required unless `customerId` names a customer, whose name, email and phone
 * are then copied into it. When both are given the body's `customer` is kept as given.
 */
export const CreateOrderBody = v.pipe(
  v.strictObject({
    customerId: v.optional(v.nullable(IdRef('cus'))),
    customer: v.optional(OrderCustomer),
    items: OrderItems,
    currency: Currency,
    travelDate: v.optional(v.nullable(CalendarDate)),
    notes: optionalText(5000),
    metadata: v.optional(v.nullable(Metadata)),
  }),
  v.forward(
    v.partialCheck([['customer'], ['customerId']], (i) => i.customer !== undefined || typeof i.customerId === 'string', 'is required when customerId is not given'),
    ['customer'],
  ),
)

/** `customerId` re-links the order and, unless `customer` is also given, copies that customer again; `null` unlinks and keeps the copy. */
export const UpdateOrderBody = v.strictObject({
  customerId: v.optional(v.nullable(IdRef('cus'))),
  customer: v.optional(OrderCustomer),
  items: v.optional(OrderItems),
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
