import { v7 as uuidv7 } from 'uuid'

export const ID_PREFIXES = [
  'ten', 'key', 'ord', 'cus', 'prd', 'iti', 'inv', 'pay', 'sup', 'cnt', 'inq', 'wh', 'del', 'evt', 'req',
] as const
export type IdPrefix = (typeof ID_PREFIXES)[number]

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
const patterns = new Map<string, RegExp>(ID_PREFIXES.map((p) => [p, new RegExp(`^${p}_${UUID}$`)]))

/** A new id: prefix, `_`, UUIDv7 (time-ordered, so ids sort by creation within a process). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${uuidv7()}`
}

/** The exact pattern an id of this prefix must match (the OpenAPI document shows it). */
export function idPattern(prefix: IdPrefix): RegExp {
  return patterns.get(prefix)!
}

export function isId(prefix: IdPrefix, value: unknown): value is string {
  return typeof value === 'string' && patterns.get(prefix)!.test(value)
}
