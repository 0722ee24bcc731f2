import { randomFillSync } from 'node:crypto'

export const ID_PREFIXES = [
  'ten', 'key', 'ord', 'cus', 'prd', 'iti', 'inv', 'pay', 'sup', 'cnt', 'inq', 'wh', 'del', 'evt', 'req', 'ses',
] as const
export type IdPrefix = (typeof ID_PREFIXES)[number]

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
const patterns = new Map<string, RegExp>(ID_PREFIXES.map((p) => [p, new RegExp(`^${p}_${UUID}$`)]))

/**
 * A new id: prefix, `_`, a version-7 UUID whose first 12 characters are a time window and a
 * count, so that the ids of one fan-out differ early (docs/decisions/0044-short-id-layout.md).
 * Ids sort by creation within a process, and by creation time across processes to the window.
 */
export function newId(prefix: IdPrefix): string {
  return newIdAt(prefix, Date.now())
}

/**
 * The id `newId` makes at `ms` (tests give the clock). The 48 bits that RFC 9562 calls
 * unix_ts_ms hold: 34 bits of the window (ms / 256), then 10 bits counting the prefix's ids in
 * the window, then the high 4 bits of a 16-bit overflow count whose low 12 bits are rand_a.
 * The first 1,024 ids of a window differ within the first 12 hex digits; later ones of the same
 * window count in the overflow (same head, still increasing). The 62 bits of rand_b are random.
 * Every prefix counts on its own: request ids never use up the heads of deliveries.
 */
export function newIdAt(prefix: IdPrefix, ms: number): string {
  const s = (_states[prefix] ??= { window: -1, count: 0, overflow: 0 })
  const window = Math.floor(ms / _WINDOW_MS)
  if (window > s.window) {
    s.window = window
    s.count = 0
    s.overflow = 0
  } else if (s.count < _COUNT_MAX) s.count++
  else if (s.overflow < _OVERFLOW_MAX) s.overflow++
  else {
    // 2^26 ids in 256 ms: borrow the next window (the ids stay increasing).
    s.window++
    s.count = 0
    s.overflow = 0
  }
  if (_next === _POOL_IDS) {
    randomFillSync(_pool)
    _next = 0
  }
  const r = 8 * _next++
  // 48 bits: window (34) | count (10) | overflow's high 4. As two numbers: high 24, low 24.
  const high = Math.floor(s.window / 2 ** 10)
  const low = ((s.window % 2 ** 10) * 2 ** 14) + (s.count << 4) + (s.overflow >>> 12)
  const randA = s.overflow & 0xfff
  return `${prefix}_${_hex(high, 6)}${_hex(low >>> 16, 2)}-${_hex(low & 0xffff, 4)}-${_hex(0x7000 | randA, 4)}-` +
    `${_hex(0x8000 | (_pool[r]! & 0x3f) << 8 | _pool[r + 1]!, 4)}-${_byteHex(r + 2, 6)}`
}

/** The exact pattern an id of this prefix must match (the OpenAPI document shows it). */
export function idPattern(prefix: IdPrefix): RegExp {
  return patterns.get(prefix)!
}

export function isId(prefix: IdPrefix, value: unknown): value is string {
  return typeof value === 'string' && patterns.get(prefix)!.test(value)
}

const _WINDOW_MS = 256
const _COUNT_MAX = 1023
const _OVERFLOW_MAX = 0xffff
const _states: Partial<Record<IdPrefix, { window: number; count: number; overflow: number }>> = {}

// rand_b's bytes come from a pool filled 512 ids at a time (one getRandomValues call per id
// would cost more than the id).
const _POOL_IDS = 512
const _pool = new Uint8Array(8 * _POOL_IDS)
let _next = _POOL_IDS
const _HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

function _hex(n: number, digits: number): string {
  return n.toString(16).padStart(digits, '0')
}

function _byteHex(from: number, count: number): string {
  let out = ''
  for (let i = from; i < from + count; i++) out += _HEX[_pool[i]!]!
  return out
}
