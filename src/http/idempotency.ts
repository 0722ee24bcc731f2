import { hash } from 'node:crypto'
import type { AppDeps } from '../context.ts'
import { ApiError, badRequest } from './errors.ts'
import { textStream } from '../lib/json-stream.ts'

const TTL_MS = 24 * 3_600_000
/** A first request that never finished (process killed) stops blocking its key after this. */
const STALE_IN_FLIGHT_MS = 60_000

export interface StoredResponse {
  status: number
  body: string
}

/**
 * An answer built a window at a time (json-stream.ts): kept as its parts, each written on a turn
 * of its own as it is rendered, and sent, the first time as on a replay, read back one part a
 * pull. Kept whole, a 108 MB attempt log held every tenant's requests for 0.5 s to store and 1.1 s
 * to replay, and serve's memory grew by as much.
 */
export interface PartsResponse {
  status: number
  parts: AsyncIterable<string>
}

export interface IdempotentAnswer {
  status: number
  body: string | ReadableStream<Uint8Array>
  replayed: boolean
}

/** Rendered text gathered into parts of at least this many characters (a window of attempts is one). */
const PART_CHARS = 64 * 1024

const conflict = (message: string) => new ApiError(409, 'idempotency_conflict', message)

export function checkIdempotencyKey(value: string): string {
  if (!/^[\x21-\x7e]{1,255}$/.test(value)) throw badRequest('Idempotency-Key must be 1-255 visible ASCII characters')
  return value
}

/** Same JSON with keys in another order counts as the same body. */
export function bodyFingerprint(value: unknown): string {
  return hash('sha256', JSON.stringify(_canonical(value)) ?? '', 'hex')
}

function _canonical(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(_canonical)
  if (x && typeof x === 'object') {
    return Object.fromEntries(Object.keys(x).sort().map((k) => [k, _canonical((x as Record<string, unknown>)[k])]))
  }
  return x
}

/**
 * Runs `run` at most once per (API key, Idempotency-Key) within 24 h. The key is claimed
 * before the work starts, so a concurrent or later repeat never runs it twice; the first
 * response is stored and replayed. A different body or path with the same key → 409.
 * `run` returns the response it would send, errors included (a 4xx is stored and replayed
 * like a success); 5xx answers are not stored: the claim is released so the client may retry.
 */
export async function idempotent(
  deps: AppDeps,
  who: { keyId: string; tenantId: string },
  key: string,
  request: { method: string; path: string; fingerprint: string },
  run: () => Promise<StoredResponse | PartsResponse>,
  opts: {
    /** What is kept for the replay, when it must differ from what this request answers (secrets). */
    toStored?: (body: string) => string
    /** A stored answer's part that could not be read once its status went out (the connection is cut). */
    onStreamError?: (err: unknown) => void
  } = {},
): Promise<IdempotentAnswer> {
  const { db, clock } = deps
  const now = clock.now()
  const onStreamError = opts.onStreamError ?? (() => {})
  const existing = await _find(deps, who.keyId, key)
  if (existing && now.getTime() - Date.parse(existing.created_at) < TTL_MS) {
    if (_differs(existing, request)) throw _mismatch()
    if (existing.status !== null && existing.parts !== null) {
      return { status: existing.status, body: _partsStream(deps, { keyId: who.keyId, key, createdAt: existing.created_at, parts: existing.parts }, onStreamError), replayed: true }
    }
    if (existing.status !== null && existing.response !== null) {
      return { status: existing.status, body: existing.response, replayed: true }
    }
    if (now.getTime() - Date.parse(existing.created_at) < STALE_IN_FLIGHT_MS) {
      throw conflict('A request with this Idempotency-Key is still being processed')
    }
  }
  // Claim (or re-claim an expired/abandoned) key; the primary key makes a concurrent claim fail.
  const createdAt = now.toISOString()
  const claimed = await db.insertInto('idempotency_keys')
    .values({
      key_id: who.keyId, idem_key: key, tenant_id: who.tenantId, method: request.method, path: request.path,
      body_hash: request.fingerprint, status: null, response: null, created_at: createdAt,
    })
    .onConflict((oc) => oc.columns(['key_id', 'idem_key']).doUpdateSet({
      method: request.method, path: request.path, body_hash: request.fingerprint, status: null, response: null, parts: null,
      created_at: createdAt,
    }).where('idempotency_keys.created_at', '=', existing?.created_at ?? ''))
    .executeTakeFirst()
  if (Number(claimed.numInsertedOrUpdatedRows ?? 0) === 0) {
    throw conflict('A request with this Idempotency-Key is still being processed')
  }
  let result: StoredResponse | { status: number; parts: number }
  try {
    const ran = await run()
    // A streamed answer's parts are written before it is answered: what the client reads is what a replay will.
    result = 'parts' in ran ? { status: ran.status, parts: await _writeParts(deps, who, key, createdAt, ran.parts) } : ran
  } catch (err) {
    await _release(deps, who.keyId, key)
    throw err
  }
  if ('parts' in result) {
    // Only on this claim: one taken over as abandoned meanwhile (a write of over a minute) keeps its own parts.
    await db.updateTable('idempotency_keys').set({ status: result.status, parts: result.parts })
      .where('key_id', '=', who.keyId).where('idem_key', '=', key).where('created_at', '=', createdAt).execute()
    return { status: result.status, body: _partsStream(deps, { keyId: who.keyId, key, createdAt, parts: result.parts }, onStreamError), replayed: false }
  }
  if (result.status >= 500) await _release(deps, who.keyId, key)
  else {
    await db.updateTable('idempotency_keys').set({ status: result.status, response: opts.toStored ? opts.toStored(result.body) : result.body })
      .where('key_id', '=', who.keyId).where('idem_key', '=', key).execute()
  }
  return { ...result, replayed: false }
}

/** Writes `parts` gathered into rows of at least PART_CHARS characters, one row a statement; returns how many rows. */
async function _writeParts(deps: AppDeps, who: { keyId: string; tenantId: string }, key: string, createdAt: string, parts: AsyncIterable<string>): Promise<number> {
  let n = 0
  let pending = ''
  const write = async () => {
    // On a turn of its own: not on the one that rendered the window (json-stream.ts).
    await new Promise<void>((resolve) => setImmediate(resolve))
    await deps.db.insertInto('idempotency_parts').values({ key_id: who.keyId, idem_key: key, tenant_id: who.tenantId, created_at: createdAt, part: n, body: pending }).execute()
    n++
    pending = ''
  }
  for await (const text of parts) {
    pending += text
    if (pending.length >= PART_CHARS) await write()
  }
  if (pending.length > 0 || n === 0) await write()
  return n
}

/**
 * A stored answer's parts as UTF-8 chunks (json-stream.ts textStream()), one part read a pull,
 * each after a turn of the event loop. A part that is gone (pruned under a replay of more than an
 * hour) fails the stream: its status has gone out, so the connection is cut.
 */
function _partsStream(deps: AppDeps, r: { keyId: string; key: string; createdAt: string; parts: number }, onError: (err: unknown) => void): ReadableStream<Uint8Array> {
  return textStream((async function* () {
    for (let part = 0; part < r.parts; part++) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      const row = await deps.db.selectFrom('idempotency_parts').select('body')
        .where('key_id', '=', r.keyId).where('idem_key', '=', r.key).where('created_at', '=', r.createdAt).where('part', '=', part)
        .executeTakeFirst()
      if (!row) throw new Error(`part ${part} of ${r.parts} of a stored answer is missing`)
      yield row.body
    }
  })(), onError)
}

/**
 * 409 when this Idempotency-Key already stands for another request (method, path or body) of
 * the same API key within 24 h. Runs before the body is validated, so a reused key is reported
 * as the conflict it is rather than as whatever is wrong with the new body.
 */
export async function assertSameRequest(
  deps: AppDeps,
  who: { keyId: string },
  key: string,
  request: { method: string; path: string; fingerprint: string },
): Promise<void> {
  const existing = await _find(deps, who.keyId, key)
  if (existing && deps.clock.now().getTime() - Date.parse(existing.created_at) < TTL_MS && _differs(existing, request)) throw _mismatch()
}

function _find(deps: AppDeps, keyId: string, key: string) {
  return deps.db.selectFrom('idempotency_keys').selectAll()
    .where('key_id', '=', keyId).where('idem_key', '=', key).executeTakeFirst()
}

function _differs(existing: { method: string; path: string; body_hash: string }, request: { method: string; path: string; fingerprint: string }): boolean {
  return existing.method !== request.method || existing.path !== request.path || existing.body_hash !== request.fingerprint
}

const _mismatch = () => conflict('This Idempotency-Key was already used with a different request body or path')

async function _release(deps: AppDeps, keyId: string, key: string): Promise<void> {
  await deps.db.deleteFrom('idempotency_keys').where('key_id', '=', keyId).where('idem_key', '=', key).execute()
}

/**
 * Records one statement of the prune deletes at most. The prune runs hourly and finds the hour
 * of records that has just turned 24 h old: at 100 keyed requests a second, 360,000 of them. In
 * one statement 100,000 records (1 KB responses) held SQLite — every tenant's requests — for
 * 1.2–1.4 s; 500 a statement keep each under a few ms.
 */
export const IDEMPOTENCY_PRUNE_BATCH = 500
/** Parts (up to ~2 MB each: a window of attempts) one statement of the prune deletes at most. */
export const IDEMPOTENCY_PRUNE_PARTS = 4
/** Parts outlive their record by this much: a replay that began just before its record expired still reads them to its end. */
const PARTS_GRACE_MS = 3_600_000

/**
 * Drops records older than 24 h, and parts older than 25 h (their record's, or those of a
 * claim that never finished); called hourly by the server. Oldest first, at most
 * IDEMPOTENCY_PRUNE_BATCH records or IDEMPOTENCY_PRUNE_PARTS parts a statement, each on a turn
 * of the event loop of its own (other requests are served between two) and after `room()`
 * (SQLite's checkpointer: deletes never outrun the disk, as retention's do). Stops between two
 * statements once `stopping` settles.
 */
export async function pruneIdempotencyKeys(deps: AppDeps, o: { room?: () => Promise<void>; stopping?: Promise<void> } = {}): Promise<void> {
  const now = deps.clock.now().getTime()
  const cutoff = new Date(now - TTL_MS).toISOString()
  const partsCutoff = new Date(now - TTL_MS - PARTS_GRACE_MS).toISOString()
  let stopped = false
  void o.stopping?.then(() => (stopped = true))
  const batches = async (limit: number, statement: () => Promise<bigint>) => {
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve))
      if (o.room) await (o.stopping ? Promise.race([o.room(), o.stopping]) : o.room())
      if (stopped) return
      if (Number(await statement()) < limit) return
    }
  }
  await batches(IDEMPOTENCY_PRUNE_BATCH, async () => (await deps.db.deleteFrom('idempotency_keys')
    .where((eb) => eb(eb.refTuple('key_id', 'idem_key'), 'in', eb.selectFrom('idempotency_keys').select(['key_id', 'idem_key'])
      .where('created_at', '<', cutoff).orderBy('created_at').limit(IDEMPOTENCY_PRUNE_BATCH).$asTuple('key_id', 'idem_key')))
    .executeTakeFirst()).numDeletedRows)
  await batches(IDEMPOTENCY_PRUNE_PARTS, async () => (await deps.db.deleteFrom('idempotency_parts')
    .where((eb) => eb(eb.refTuple('key_id', 'idem_key', 'created_at', 'part'), 'in', eb.selectFrom('idempotency_parts')
      .select(['key_id', 'idem_key', 'created_at', 'part'])
      .where('created_at', '<', partsCutoff).orderBy('created_at').limit(IDEMPOTENCY_PRUNE_PARTS).$asTuple('key_id', 'idem_key', 'created_at', 'part')))
    .executeTakeFirst()).numDeletedRows)
}
