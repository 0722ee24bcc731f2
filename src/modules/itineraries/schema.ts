import * as v from 'valibot'
import { CalendarDate, IdRef, Metadata, optionalText, text } from '../fields.ts'

/** At most one entry per day of a year-long trip. */
export const MAX_DAYS = 366
export const MAX_DAY_ITEMS = 50

export const ItineraryDayInput = v.strictObject({
  day: v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'), v.maxValue(MAX_DAYS, `must be at most ${MAX_DAYS}`)),
  date: v.optional(v.nullable(CalendarDate)),
  title: text(200),
  description: optionalText(5000),
  /** Free-text entries of the day ("08:00 pick-up at the hotel"). */
  items: v.optional(v.nullable(v.pipe(v.array(text(500)), v.maxLength(MAX_DAY_ITEMS, `must have at most ${MAX_DAY_ITEMS} items`)))),
})

const Days = v.pipe(v.array(ItineraryDayInput), v.maxLength(MAX_DAYS, `must have at most ${MAX_DAYS} days`))

export const CreateItineraryBody = v.strictObject({
  title: text(200),
  orderId: v.optional(v.nullable(IdRef('ord'))),
  customerId: v.optional(v.nullable(IdRef('cus'))),
  startDate: CalendarDate,
  endDate: CalendarDate,
  days: v.optional(Days, []),
  metadata: v.optional(v.nullable(Metadata)),
})

export const UpdateItineraryBody = v.strictObject({
  title: v.optional(text(200)),
  orderId: v.optional(v.nullable(IdRef('ord'))),
  customerId: v.optional(v.nullable(IdRef('cus'))),
  startDate: v.optional(CalendarDate),
  endDate: v.optional(CalendarDate),
  days: v.optional(Days),
  metadata: v.optional(v.nullable(Metadata)),
})

export const ITINERARY_READ_ONLY = ['id', 'createdAt', 'updatedAt', 'tenantId'] as const

export const ListItinerariesQuery = {
  orderId: v.optional(IdRef('ord')),
}

export type CreateItineraryInput = v.InferOutput<typeof CreateItineraryBody>
export type UpdateItineraryInput = v.InferOutput<typeof UpdateItineraryBody>
export type ItineraryDayValue = v.InferOutput<typeof ItineraryDayInput>

export interface ItineraryDay {
  day: number
  date: string | null
  title: string
  description: string | null
  items: string[]
}

/** The itinerary as the API shows it. */
export interface Itinerary {
  id: string
  title: string
  orderId: string | null
  customerId: string | null
  startDate: string
  endDate: string
  days: ItineraryDay[]
  metadata: Record<string, string>
  createdAt: string
  updatedAt: string
}
