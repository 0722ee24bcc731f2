import type { Db } from '../../db/connect.ts'
import { HOUR_MS, rateDecision, type Limiter, type RateDecision } from '../../lib/rate-window.ts'

/**
 * The same windows counted in the database (table rate_windows), for several `serve` processes
 * on one PostgreSQL database (CONTRACT §10): every process's requests count against the one
 * window, and never more than the limit are allowed across all of them.
 *
 * Without one round trip per request: a process reserves a block of requests at once (one
 * atomic upsert adds the block to the shared count) and admits that many locally, without
 * waiting. A block is 1 for a key seen rarely, and doubles while a key uses its blocks up within
 * 100 ms (up to 256), so a process holds at most ~100 ms of a key's traffic unused; it is never
 * more than 1/16 of what the window has left, so near the limit every request takes its own
 * round trip and the count is exact (a limit of 10 is counted one by one). Units a process
 * holds unused for a second (the key's traffic stopped or went to another process) are given
 * back (subtracted from the shared count), and so is everything held when serve stops
 * (close()); only a process that dies holding units, or a give-back that fails, leaves them
 * counted as used: the error is on the side of refusing, never of allowing more than the
 * limit. Requests past the limit are counted too (and refused), one by one.
 */
export class SharedRateLimiter implements Limiter {
  #keys = new Map<string, _Reserve>()
  #sweptHour = 0
  #idleTimer: ReturnType<typeof setTimeout> | null = null

  #db: Db

  constructor(db: Db) {
    this.#db = db
  }

  hit(keyId: string, limit: number, nowMs: number, tenantId: string): RateDecision | Promise<RateDecision> {
    const hour = Math.floor(nowMs / HOUR_MS)
    if (hour !== this.#sweptHour) this.#sweep(hour)
    let r = this.#keys.get(keyId)
    if (!r || r.hour !== hour) this.#keys.set(keyId, (r = { keyId, hour, shared: 0, held: 0, block: 0, reservedAt: 0, usedAt: 0, reserving: null }))
    if (r.held > 0) return this.#take(r, limit, nowMs)
    return this.#reserveThenTake(r, keyId, tenantId, limit, nowMs)
  }

  /** One of the units this process holds. */
  #take(r: _Reserve, limit: number, nowMs: number): RateDecision {
    r.held--
    r.usedAt = performance.now()
    return rateDecision(true, limit, Math.min(limit, r.shared - r.held), r.hour, nowMs)
  }

  async #reserveThenTake(r: _Reserve, keyId: string, tenantId: string, limit: number, nowMs: number): Promise<RateDecision> {
    for (;;) {
      if (r.held > 0) return this.#take(r, limit, nowMs)
      if (r.reserving) {
        await r.reserving // another request of this key is reserving: share its block
        continue
      }
      const since = nowMs - r.reservedAt
      const grow = r.block === 0 ? 1 : since < 100 ? r.block * 2 : since < 1000 ? r.block : 1
      const block = Math.max(1, Math.min(grow, _MAX_BLOCK, Math.floor((limit - r.shared) / 16)))
      let refused = false
      r.reserving = this.#reserve(keyId, tenantId, r.hour, block).then((shared) => {
        const fits = Math.max(0, Math.min(block, limit - (shared - block)))
        r.shared = shared
        r.block = block
        r.reservedAt = nowMs
        r.usedAt = performance.now()
        if (fits === 0) refused = true
        else if (fits > 1) {
          r.held += fits - 1 // one for this request
          this.#idleTimer ??= setTimeout(() => void this.#giveBackIdle(), _IDLE_MS).unref()
        }
      }).finally(() => (r.reserving = null))
      await r.reserving
      if (refused) return rateDecision(false, limit, limit, r.hour, nowMs)
      return rateDecision(true, limit, Math.min(limit, r.shared - r.held), r.hour, nowMs)
    }
  }

  /** Adds `n` to the key's shared count for the hour; the count after. */
  async #reserve(keyId: string, tenantId: string, hour: number, n: number): Promise<number> {
    const row = await this.#db.insertInto('rate_windows').values({ key_id: keyId, tenant_id: tenantId, hour, count: n })
      .onConflict((oc) => oc.columns(['key_id', 'hour']).doUpdateSet((eb) => ({ count: eb('rate_windows.count', '+', n) })))
      .returning('count').executeTakeFirstOrThrow()
    return row.count
  }

  /** Gives back what each key has held unused for _IDLE_MS; looks again when the next one will have. */
  async #giveBackIdle(): Promise<void> {
    const idleSince = performance.now() - _IDLE_MS
    await Promise.all([...this.#keys.values()].filter((r) => r.usedAt <= idleSince).map((r) => this.#giveBack(r)))
    this.#idleTimer = null
    let next = Infinity // the next key to become idle
    for (const r of this.#keys.values()) if (r.held > 0) next = Math.min(next, r.usedAt + _IDLE_MS)
    if (next !== Infinity) this.#idleTimer = setTimeout(() => void this.#giveBackIdle(), Math.max(20, next - performance.now())).unref()
  }

  async #giveBack(r: _Reserve): Promise<void> {
    if (r.held === 0 || r.reserving) return
    const n = r.held
    r.held = 0
    r.shared -= n
    r.block = 0 // the next reservation starts small again
    await this.#db.updateTable('rate_windows').set((eb) => ({ count: eb('count', '-', n) }))
      .where('key_id', '=', r.keyId).where('hour', '=', r.hour).execute()
      .catch(() => {}) // left counted as used: refusing early, never allowing more
  }

  /** Gives back every unit held (serve is stopping); later requests reserve afresh. */
  async close(): Promise<void> {
    if (this.#idleTimer) clearTimeout(this.#idleTimer)
    this.#idleTimer = null
    await Promise.all([...this.#keys.values()].map((r) => this.#giveBack(r)))
  }

  #sweep(hour: number): void {
    for (const [k, r] of this.#keys) if (r.hour !== hour) this.#keys.delete(k)
    this.#sweptHour = hour
  }

  /** Windows before the previous hour are no longer read. */
  async prune(nowMs: number): Promise<void> {
    await this.#db.deleteFrom('rate_windows').where('hour', '<', Math.floor(nowMs / HOUR_MS) - 1).execute()
  }
}

/** The most requests a process reserves at once for one key. */
const _MAX_BLOCK = 256
/** Units held unused this long are given back. */
const _IDLE_MS = 1_000

interface _Reserve {
  keyId: string
  hour: number
  /** The key's shared count for the hour after this process's last reservation (every process's units). */
  shared: number
  /** Units reserved by this process and not used yet. */
  held: number
  /** The size of the last block reserved (0: none yet). */
  block: number
  reservedAt: number
  /** performance.now() of the last unit taken (a real clock: idleness is real time, whatever the app's clock says). */
  usedAt: number
  reserving: Promise<void> | null
}
