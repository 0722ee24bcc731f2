import * as v from 'valibot'
import { idPattern, type IdPrefix } from '../lib/ids.ts'

/**
 * Field schemas of what the API returns. The module `…View` schemas are built from these:
 * they document each response's `data` in GET /v1/openapi.json and give the API types
 * (`type Order = v.InferOutput<typeof OrderView>`). They never validate at run time; requests
 * are validated by fields.ts. Use as `import * as out from '../view-fields.ts'`.
 */

/** An id of the given prefix: `ord_` + UUIDv7. */
export const id = (prefix: IdPrefix) => v.pipe(v.string(), v.regex(idPattern(prefix)))

/** A reference to a record that may be unset (`null`). */
export const ref = (prefix: IdPrefix, description: string) => v.pipe(v.nullable(id(prefix)), v.description(description))

export const Timestamp = v.pipe(
  v.string(),
  v.isoTimestamp(),
  v.description('UTC time, ISO 8601 with milliseconds as `Date.toISOString()` gives it, e.g. `2027-06-01T09:30:00.000Z`'),
)

/** A timestamp that may be unset, with what it is. */
export const optionalTimestamp = (description: string) => v.pipe(v.nullable(Timestamp), v.description(description))

export const CalendarDate = v.pipe(v.string(), v.isoDate(), v.description('Calendar date `YYYY-MM-DD`'))

export const optionalDate = (description: string) => v.pipe(v.nullable(CalendarDate), v.description(description))

export const Currency = v.pipe(v.string(), v.regex(/^[A-Z]{3}$/), v.description('ISO 4217 currency code, e.g. `EUR`'))

/** Money: a JSON number in major units of the record's `currency`, exact to its minor digits. */
export const Money = v.pipe(
  v.number(),
  v.minValue(0),
  v.description('Amount in major units of `currency` (`149.5` EUR), never more decimals than the currency has'),
)

export const Metadata = v.pipe(
  v.record(v.string(), v.string()),
  v.description('Your own string key/value pairs, keys sorted; `{}` when none are set'),
)

export const Email = v.pipe(v.string(), v.email())

/** Free text that may be unset. */
export const optionalText = (description?: string) => (description ? v.pipe(v.nullable(v.string()), v.description(description)) : v.nullable(v.string()))

/** A whole number in [min, max]. */
export const Int = (min: number, max?: number) =>
  max === undefined ? v.pipe(v.number(), v.integer(), v.minValue(min)) : v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max))

/** A postal address (customers, suppliers): every key present, `null` for the optional parts. */
export const AddressView = v.pipe(
  v.strictObject({
    line1: v.string(),
    line2: v.nullable(v.string()),
    city: v.string(),
    region: v.nullable(v.string()),
    postalCode: v.nullable(v.string()),
    country: v.pipe(v.string(), v.regex(/^[A-Z]{2}$/), v.description('ISO 3166-1 alpha-2 country code, e.g. `NO`')),
  }),
  v.title('Address'),
)

/** `created_at`/`createdAt` and `updated_at`/`updatedAt` with what they mean. */
export const createdAt = v.pipe(Timestamp, v.description('When the record was created (UTC, ISO 8601 with milliseconds)'))
export const updatedAt = v.pipe(Timestamp, v.description('When the record last changed; a PATCH that changes nothing keeps it'))
