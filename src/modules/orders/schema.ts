import * as v from 'valibot'
import { documented } from '../../lib/schema-hints.ts'
import { CalendarDate, Currency, LowerEmail, IdRef, Metadata, Money, Phone, Quantity, TimestampQuery, optionalText, text } from '../fields.ts'
import * as out from '../view-fields.ts'

export const ORDER_STATUSES = ['pending', 'confirmed', 'cancelled', 'completed'] as const
export type OrderStatus = (typeof ORDER_STATUSES)[number]

export const OrderCustomer = v.strictObject({
  firstName: text(100),
  lastName: text(100),
  email: LowerEmail,
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
documented(CreateOrderBody.pipe[1], { anyOf: [{ required: ['customer'], properties: { customer: { type: 'object' } } }, { required: ['customerId'], properties: { customerId: { type: 'string' } } }] })

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
export const OrderView = v.pipe(
  v.strictObject({
    id: out.id('ord'),
    orderNumber: v.pipe(v.string(), v.regex(/^ORD-\d{6,}$/), v.description('Per-tenant sequence, `ORD-000001`')),
    status: v.picklist(ORDER_STATUSES),
    customerId: out.ref('cus', 'The linked customer; `null` when the order is not linked to one'),
    customer: v.pipe(
      v.strictObject({ firstName: v.string(), lastName: v.string(), email: out.Email, phone: v.nullable(v.string()) }),
      v.description('The contact as given, or as copied from the customer `customerId` names'),
    ),
    items: v.array(v.strictObject({
      productId: out.ref('prd', 'The product this item is for, if any'),
      description: v.string(),
      quantity: out.Int(1),
      unitPrice: out.Money,
      total: v.pipe(out.Money, v.description('`quantity × unitPrice`, in major units of `currency`')),
    })),
    total: v.pipe(out.Money, v.description('Sum of the items\' totals, in major units of `currency`')),
    currency: out.Currency,
    travelDate: out.optionalDate('Date of travel, if known'),
    notes: out.optionalText(),
    metadata: out.Metadata,
    createdAt: out.createdAt,
    updatedAt: out.updatedAt,
  }),
  v.title('Order'),
  v.description('An order as the API returns it (GET, the answers of writes, and the `data` of order events)'),
)

export type Order = v.InferOutput<typeof OrderView>
