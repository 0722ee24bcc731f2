/**
 * Money crosses the API as JSON numbers in major units and lives in the database as
 * integer minor units. Conversion is exact: an amount with more decimals than its
 * currency has is refused, never rounded.
 */

// ISO 4217 minor units for the codes that do not use 2 (everything else uses 2).
const MINOR_DIGITS: Record<string, number> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0,
  UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
}

/**
 * ISO 4217 codes with minor units that ICU's list (circulating currencies) leaves out: funds
 * and units of account, and VED. Precious metals and X-codes without minor units stay out.
 */
const NOT_IN_ICU = ['BOV', 'CHE', 'CHW', 'CLF', 'COU', 'MXV', 'USN', 'UYI', 'UYW', 'VED']

let known: Set<string> | undefined

/** True for a current or historical ISO 4217 code known to this runtime's ICU data, or one of NOT_IN_ICU. */
export function isCurrency(code: string): boolean {
  known ??= new Set([...Intl.supportedValuesOf('currency'), ...NOT_IN_ICU])
  return /^[A-Z]{3}$/.test(code) && known.has(code)
}

/** Every code isCurrency() accepts, sorted (the OpenAPI document's enum). */
export function currencyCodes(): string[] {
  isCurrency('EUR')
  return [...known!].filter((c) => /^[A-Z]{3}$/.test(c)).sort()
}

export function minorDigits(currency: string): number {
  return MINOR_DIGITS[currency] ?? 2
}

/** Largest amount accepted, in minor units: keeps every sum a safe integer. */
export const MAX_MINOR = 10 ** 13

/** Major-unit number → integer minor units, or null when it has too many decimals or is out of range. */
export function toMinor(amount: number, currency: string): number | null {
  if (!Number.isFinite(amount) || amount < 0) return null
  const scale = 10 ** minorDigits(currency)
  const minor = Math.round(amount * scale)
  if (minor / scale !== amount || minor > MAX_MINOR) return null
  return minor
}

/** Integer minor units → major-unit number (shortest exact decimal, e.g. 30 → 0.3). */
export function toMajor(minor: number, currency: string): number {
  return minor / 10 ** minorDigits(currency)
}
