export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** ISO 8601 UTC with milliseconds, the only timestamp format travelops writes. */
export function toIso(d: Date): string {
  return d.toISOString()
}
