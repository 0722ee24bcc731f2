// Durations (CONTRACT §16): one grammar everywhere, `<integer><s|m|h|d>`, each input with its
// allowed range; out of range or malformed is refused naming the range (exit 2 / 422), never
// capped. Where `0` means "never" (--retention, --disable-after) the range says so.

import toRegexRange from 'to-regex-range'

const DAY = 86_400_000
const UNITS = { s: 1_000, m: 60_000, h: 3_600_000, d: DAY } as const

/** The grammar itself; also the OpenAPI `pattern` of every duration field. */
export const DURATION_PATTERN = /^[0-9]+[smhd]$/

export interface DurationRange {
  minMs: number
  maxMs: number
  /** `0` is accepted and means this (→ 0 ms). */
  zero?: string
}

/** A key's `--expires-in` / `expires_in`. */
export const KEY_LIFETIME: DurationRange = { minMs: 1_000, maxMs: 3650 * DAY }
/** A dashboard sign-in link's `--expires-in` / `expires_in`. */
export const LINK_LIFETIME: DurationRange = { minMs: 1_000, maxMs: 7 * DAY }
/** `--retention` (0: keep everything) and `--disable-after` (0: never). */
export const RETENTION: DurationRange = { minMs: 1_000, maxMs: 3650 * DAY, zero: 'keep everything' }
export const DISABLE_AFTER: DurationRange = { minMs: 1_000, maxMs: 3650 * DAY, zero: 'never' }

/**
 * The JSON Schema `pattern` of the durations in `range`, exactly as parseDuration() accepts them:
 * per unit, the integers (leading zeros allowed) that fall in the range, and `0` where it means something.
 */
export function durationPattern(range: DurationRange): string {
  const units = Object.entries(UNITS).flatMap(([unit, ms]) => {
    const lo = Math.max(1, Math.ceil(range.minMs / ms))
    const hi = Math.floor(range.maxMs / ms)
    return lo <= hi ? [`0*${toRegexRange(lo, hi, { capture: false })}${unit}`] : []
  })
  return `^(?:${[...units, ...(range.zero === undefined ? [] : ['0'])].join('|')})$`
}

/** `text` in milliseconds, or null when it is malformed or out of `range` (durationError() says which). */
export function parseDuration(text: string, range: DurationRange): number | null {
  if (range.zero !== undefined && text === '0') return 0
  const m = /^([0-9]+)([smhd])$/.exec(text)
  if (!m) return null
  const ms = Number(m[1]) * UNITS[m[2] as keyof typeof UNITS]
  return ms >= range.minMs && ms <= range.maxMs ? ms : null
}

/** What is wrong with `text` as a duration in `range` (naming the range), or null when it is one. */
export function durationError(text: string | undefined, range: DurationRange): string | null {
  if (text !== undefined && parseDuration(text, range) !== null) return null
  return `must be a duration <integer><s|m|h|d> from ${formatDuration(range.minMs)} to ${formatDuration(range.maxMs)}${range.zero === undefined ? '' : `, or 0 (${range.zero})`}`
}

/** `7d`, `90m`, `1s`: the largest unit that divides `ms` exactly. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm'] as const) if (ms % UNITS[unit] === 0) return `${ms / UNITS[unit]}${unit}`
  return `${ms / 1000}s`
}
