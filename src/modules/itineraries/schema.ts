import * as v from 'valibot'
import { CalendarDate, IdRef, Metadata, optionalText, text } from '../fields.ts'
import * as out from '../view-fields.ts'

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

/** The itinerary as the API shows it. */
export const ItineraryView = v.pipe(
  v.strictObject({
    id: out.id('iti'),
    title: v.string(),
    orderId: out.ref('ord', 'The order this itinerary belongs to, if any'),
    customerId: out.ref('cus', 'The customer travelling, if set'),
    startDate: out.CalendarDate,
    endDate: v.pipe(out.CalendarDate, v.description('Calendar date `YYYY-MM-DD`, not before `startDate`')),
    days: v.array(v.strictObject({
      day: v.pipe(out.Int(1, MAX_DAYS), v.description('Day of the trip; day 1 is `startDate`; unique within the itinerary')),
      date: out.optionalDate('The day\'s date, within `startDate`..`endDate`, if given'),
      title: v.string(),
      description: out.optionalText(),
      items: v.pipe(v.array(v.string()), v.description('Free-text entries of the day; `[]` when none')),
    })),
    metadata: out.Metadata,
    createdAt: out.createdAt,
    updatedAt: out.updatedAt,
  }),
  v.title('Itinerary'),
  v.description('An itinerary as the API returns it (GET, the answers of writes, and the `data` of itinerary.created)'),
)

export type Itinerary = v.InferOutput<typeof ItineraryView>
export type ItineraryDay = Itinerary['days'][number]
