import { hash } from 'node:crypto'
import type { AppDeps } from '../context.ts'
import { ApiError, badRequest } from './errors.ts'

const TTL_MS = 24 * 3_600_000
/** A first request that never finished (process killed) stops blocking its key after this. */
const STALE_IN_FLIGHT_MS = 60_000

export interface StoredResponse {
  status: number
  body: string
}

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
  run: () => Promise<StoredResponse>,
  /** What is kept for the replay, when it must differ from what this request answers (secrets). */
  toStored: (body: string) => string = (body) => body,
): Promise<StoredResponse & { replayed: boolean }> {
  const { db, clock } = deps
  const now = clock.now()
  const existing = await _find(deps, who.keyId, key)
  if (existing && now.getTime() - Date.parse(existing.created_at) < TTL_MS) {
    if (_differs(existing, request)) throw _mismatch()
    if (existing.status !== null && existing.response !== null) {
      return { status: existing.status, body: existing.response, replayed: true }
    }
    if (now.getTime() - Date.parse(existing.created_at) < STALE_IN_FLIGHT_MS) {
      throw conflict('A request with this Idempotency-Key is still being processed')
    }
  }
  // Claim (or re-claim an expired/abandoned) key; the primary key makes a concurrent claim fail.
  const claimed = await db.insertInto('idempotency_keys')
    .values({
      key_id: who.keyId, idem_key: key, tenant_id: who.tenantId, method: request.method, path: request.path,
      body_hash: request.fingerprint, status: null, response: null, created_at: now.toISOString(),
    })
    .onConflict((oc) => oc.columns(['key_id', 'idem_key']).doUpdateSet({
      method: request.method, path: request.path, body_hash: request.fingerprint, status: null, response: null,
      created_at: now.toISOString(),
    }).where('idempotency_keys.created_at', '=', existing?.created_at ?? ''))
    .executeTakeFirst()
  if (Number(claimed.numInsertedOrUpdatedRows ?? 0) === 0) {
    throw conflict('A request with this Idempotency-Key is still being processed')
  }
  let result: StoredResponse
  try {
    result = await run()
  } catch (err) {
    await _release(deps, who.keyId, key)
    throw err
  }
  if (result.status >= 500) await _release(deps, who.keyId, key)
  else {
    await db.updateTable('idempotency_keys').set({ status: result.status, response: toStored(result.body) })
      .where('key_id', '=', who.keyId).where('idem_key', '=', key).execute()
  }
  return { ...result, replayed: false }
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
 * 1.2–1.4 s (BENCHMARKS.md, twenty-seventh session).
 */
export const IDEMPOTENCY_PRUNE_BATCH = 500

/**
 * Drops records older than 24 h; called hourly by the server. Oldest first, at most
 * IDEMPOTENCY_PRUNE_BATCH a statement, each on a turn of the event loop of its own (other
 * requests are served between two) and after `room()` (SQLite's checkpointer: deletes never
 * outrun the disk, as retention's do). Stops between two statements once `stopping` settles.
 */
export async function pruneIdempotencyKeys(deps: AppDeps, o: { room?: () => Promise<void>; stopping?: Promise<void> } = {}): Promise<void> {
  const cutoff = new Date(deps.clock.now().getTime() - TTL_MS).toISOString()
  let stopped = false
  void o.stopping?.then(() => (stopped = true))
  for (;;) {
    await new Promise((resolve) => setImmediate(resolve))
    if (o.room) await (o.stopping ? Promise.race([o.room(), o.stopping]) : o.room())
    if (stopped) return
    const r = await deps.db.deleteFrom('idempotency_keys')
      .where((eb) => eb(eb.refTuple('key_id', 'idem_key'), 'in', eb.selectFrom('idempotency_keys').select(['key_id', 'idem_key'])
        .where('created_at', '<', cutoff).orderBy('created_at').limit(IDEMPOTENCY_PRUNE_BATCH).$asTuple('key_id', 'idem_key')))
      .executeTakeFirst()
    if (Number(r.numDeletedRows) < IDEMPOTENCY_PRUNE_BATCH) return
  }
}
