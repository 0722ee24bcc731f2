import { randomFillSync } from 'node:crypto'
import { v7 as uuidv7 } from 'uuid'

export const ID_PREFIXES = [
  'ten', 'key', 'ord', 'cus', 'prd', 'iti', 'inv', 'pay', 'sup', 'cnt', 'inq', 'wh', 'del', 'evt', 'req', 'ses',
] as const
export type IdPrefix = (typeof ID_PREFIXES)[number]

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
const patterns = new Map<string, RegExp>(ID_PREFIXES.map((p) => [p, new RegExp(`^${p}_${UUID}$`)]))

/** A new id: prefix, `_`, UUIDv7 (time-ordered, so ids sort by creation within a process). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${_uuidv7()}`
}

// uuid's v7() asks crypto.getRandomValues for 16 bytes per id; the random bytes are taken
// here from a pool filled 256 ids at a time, and the time/sequence state is uuid's own rule
// (a new millisecond starts from a random sequence, the same millisecond counts up), so the
// ids stay strictly increasing within the process.
const _POOL_IDS = 256
const _pool = new Uint8Array(16 * _POOL_IDS)
let _next = _POOL_IDS
const _state = { msecs: -Infinity, seq: 0 }

function _uuidv7(): string {
  if (_next === _POOL_IDS) {
    randomFillSync(_pool)
    _next = 0
  }
  const random = _pool.subarray(16 * _next, 16 * ++_next)
  const now = Date.now()
  if (now > _state.msecs) {
    _state.seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!
    _state.msecs = now
  } else {
    _state.seq = (_state.seq + 1) | 0
    if (_state.seq === 0) _state.msecs++
  }
  return uuidv7({ random, msecs: _state.msecs, seq: _state.seq })
}

/** The exact pattern an id of this prefix must match (the OpenAPI document shows it). */
export function idPattern(prefix: IdPrefix): RegExp {
  return patterns.get(prefix)!
}

export function isId(prefix: IdPrefix, value: unknown): value is string {
  return typeof value === 'string' && patterns.get(prefix)!.test(value)
}
