import * as v from 'valibot'
import type { ErrorDetail } from '../lib/errors.ts'
import { COUNTRY_CODES, isCountry } from '../lib/countries.ts'
import { parseJson as parseJsonText } from '../lib/json.ts'
import { DURATION_PATTERN, durationError, durationPattern, formatDuration, parseDuration, type DurationRange } from '../lib/duration.ts'
import { currencyCodes, isCurrency, MAX_MINOR, minorDigits, toMinor } from '../lib/money.ts'
import { documented } from '../lib/schema-hints.ts'
import type { AddressView } from './view-fields.ts'

/** Field schemas shared by the travel resources. */

export const text = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(max, `must be at most ${max} characters`))
export const optionalText = (max: number) => v.optional(v.nullable(text(max)))

export const Email = v.pipe(v.string(), v.trim(), v.maxLength(254, 'must be at most 254 characters'), v.email('must be an email address'))
/**
 * 3–32 of digits, spaces and `( ) . -` after an optional `+`, checked on the trimmed value: the
 * pattern says so for the untrimmed one too (no space at either end), so the document states it.
 */
export const Phone = v.pipe(
  v.string(),
  v.trim(),
  v.regex(/^(?:\+[0-9 ().-]{2,31}|[0-9().-][0-9 ().-]{1,30})[0-9().-]$/, 'must be a phone number (digits, spaces, + ( ) . -)'),
)

export const Currency = v.pipe(
  v.string(),
  documented(v.check(isCurrency, 'must be an ISO 4217 currency code of three capital letters, e.g. EUR'), {
    get enum() { return currencyCodes() },
    description: 'ISO 4217 currency code, e.g. `EUR`',
    examples: ['EUR'],
  }),
)

/** A money amount in major units; its decimals are checked against the currency by the service. */
export const Money = v.pipe(
  v.number(),
  v.finite('must be a finite number'),
  v.minValue(0, 'must not be negative'),
  v.maxValue(MAX_MINOR / 10_000, `must be at most ${MAX_MINOR / 10_000}`),
)

export const Quantity = v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'), v.maxValue(100_000, 'must be at most 100000'))

/** `YYYY-MM-DD`, a real calendar date. */
export const CalendarDate = v.pipe(
  v.string(),
  documented(v.check((s: string) => {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false
    const d = new Date(`${s}T00:00:00Z`)
    return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(s)
  }, 'must be a calendar date YYYY-MM-DD'), { format: 'date', description: 'Calendar date `YYYY-MM-DD` (a real date: no February 30)', examples: ['2027-06-01'] }),
)

/** Up to 50 string→string pairs. */
export const Metadata = v.pipe(
  v.record(
    v.pipe(v.string(), v.minLength(1, 'keys must not be empty'), v.maxLength(40, 'keys must be at most 40 characters')),
    v.pipe(v.string(), v.maxLength(500, 'values must be at most 500 characters')),
  ),
  v.maxEntries(50, 'must have at most 50 keys'),
)

/** An id of the given prefix in a body; a well-formed id of another tenant is caught by the service (422). */
export const IdRef = (prefix: string) =>
  v.pipe(v.string(), v.regex(new RegExp(`^${prefix}_[0-9a-f-]{36}$`), `must be an id starting with ${prefix}_`))

/** An ISO 8601 timestamp: RFC 3339, or a date alone (midnight UTC). */
const _isTimestamp = documented(
  v.check((s: string) => /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(s) && !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 timestamp'),
  {
    anyOf: [{ format: 'date-time' }, { format: 'date' }],
    description: 'An ISO 8601 timestamp (RFC 3339, e.g. `2027-06-01T09:30:00Z`), or a date alone (`2027-06-01`: midnight UTC)',
    examples: ['2027-06-01T09:30:00Z'],
  },
)

/** Query filter: an ISO 8601 timestamp, normalised to UTC with milliseconds. */
export const TimestampQuery = v.pipe(v.string(), _isTimestamp, v.transform((s) => new Date(s).toISOString()))

/** TimestampQuery with its own words and example in the document (which shows a query up to its transform). */
export const timestampQuery = (description: string, example: string) =>
  v.pipe(v.string(), v.description(description), v.examples([example]), _isTimestamp, v.transform((s) => new Date(s).toISOString()))

export const BoolQuery = v.pipe(v.picklist(['true', 'false'], "must be 'true' or 'false'"), v.transform((s) => s === 'true'))

/** The columns of `set` whose value differs from `row`: none means a PATCH changed nothing (200, no event). */
export function changedColumns<R extends object>(row: R, set: Partial<R>): (keyof R)[] {
  return (Object.keys(set) as (keyof R)[]).filter((k) => set[k] !== row[k])
}

/** A stored JSON column (metadata and other objects a tenant names the keys of), read past V8's misreading of escaped keys (lib/json.ts). */
export const parseJson = <T>(s: string | null): T | null => (s === null ? null : (parseJsonText(s) as T))

/** An email stored and compared in lower case (customers, suppliers, inquiries). */
export const LowerEmail = v.pipe(Email, v.toLowerCase())

/** Query filter on a lower-cased email: a malformed address is a 400. */
export const EmailQuery = LowerEmail

/** ISO 3166-1 alpha-2, capitals, e.g. `NO`. */
export const Country = v.pipe(
  v.string(),
  documented(v.check(isCountry, 'must be an ISO 3166-1 alpha-2 country code in capitals, e.g. NO'), {
    enum: [...COUNTRY_CODES].sort(),
    description: 'ISO 3166-1 alpha-2 country code in capitals, e.g. `NO`',
    examples: ['NO'],
  }),
)

/** A postal address (customers, suppliers); output with `null` for the optional parts. */
export const Address = v.strictObject({
  line1: text(200),
  line2: optionalText(200),
  city: text(100),
  region: optionalText(100),
  postalCode: optionalText(20),
  country: Country,
})

export type AddressInput = v.InferOutput<typeof Address>
/** An address as stored and shown: every key present, `null` for the optional parts. */
export type AddressValue = v.InferOutput<typeof AddressView>

/** Address → its stored JSON text, keys in a fixed order so equal addresses compare equal as text. */
export function toAddressJson(a: AddressInput | null | undefined): string | null {
  if (!a) return null
  const value: AddressValue = {
    line1: a.line1, line2: a.line2 ?? null, city: a.city, region: a.region ?? null, postalCode: a.postalCode ?? null, country: a.country,
  }
  return JSON.stringify(value)
}

/**
 * Metadata → stored JSON text; `null` or `{}` is stored as NULL and shown as `{}`. Keys are
 * sorted, so the same pairs sent in another order are no change (no event, same updatedAt).
 */
export const toMetadataJson = (m: Record<string, string> | null | undefined): string | null =>
  m && Object.keys(m).length ? JSON.stringify(Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))) : null

/** A whole number in [min, max]. */
export const Int = (min: number, max: number) =>
  v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(min, `must be at least ${min}`), v.maxValue(max, `must be at most ${max}`))
/** A money amount that must be more than zero (payments, refunds). */
export const PositiveMoney = v.pipe(
  v.number(),
  v.finite('must be a finite number'),
  v.gtValue(0, 'must be greater than 0'),
  v.maxValue(MAX_MINOR / 10_000, `must be at most ${MAX_MINOR / 10_000}`),
)

/** Major units → integer minor units of `currency`; on too many decimals adds a detail at `path` and returns 0. */
export function minorAt(amount: number, currency: string, path: string, details: ErrorDetail[]): number {
  const minor = toMinor(amount, currency)
  if (minor !== null) return minor
  details.push({ path, message: `must have at most ${minorDigits(currency)} decimal places for ${currency}` })
  return 0
}


/**
 * A duration in `range` (CONTRACT §16): `<integer><s|m|h|d>` (the document's `pattern`), then the
 * range; either way the 422 names the allowed range.
 */
export const Duration = (range: DurationRange, description: string) => v.pipe(
  v.string(),
  v.regex(DURATION_PATTERN, () => durationError(undefined, range)!),
  documented(v.check((s: string) => !DURATION_PATTERN.test(s) || parseDuration(s, range) !== null, () => durationError(undefined, range)!), { pattern: durationPattern(range) }),
  v.description(`${description}: \`<integer><s|m|h|d>\`, from ${formatDuration(range.minMs)} to ${formatDuration(range.maxMs)}`),
)
