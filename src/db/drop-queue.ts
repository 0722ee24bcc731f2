/**
 * Deliveries one statement of a queue drop changes at most. A subscription whose receiver has
 * failed for days may hold hundreds of thousands of queued retries: dropped in one statement,
 * 100,000 of them held SQLite — and so every other tenant's requests — for 250–270 ms
 * on SQLite; 2,000 take 5–9 ms.
 */
export const DROP_BATCH = 2_000

/**
 * Drops the queue of a subscription that is no longer active (deactivated, deleted, disabled by
 * endpoint health; that change committed): its queued deliveries, due now or later, are
 * unscheduled, and those never attempted end `failed` (CONTRACT §7). In statements of at most
 * DROP_BATCH deliveries, oldest due first (deliveries_webhook_due), each on a turn of the event
 * loop of its own, other requests served between two. Each statement checks that the
 * subscription is still inactive, so one made active again meanwhile keeps what is still queued
 * and what it queues from then on. Leases are left as they are: an attempt in flight is recorded
 * by its holder, which finds the subscription inactive.
 *
 * `batch()` drops one batch and says how many deliveries it dropped; the engine gives it
 * (Engine.dropQueue(): engine/sqlite/drop-queue.ts, engine/postgres/drop-queue.ts).
 * `stopped()` ends it between two batches (the worker's stop: what is left is dropped by the
 * claims as it comes due).
 */
export async function dropInBatches(batch: () => Promise<number>, stopped: () => boolean = () => false): Promise<void> {
  for (;;) {
    // Each batch on a turn of the event loop of its own: the first too (the worker starts a drop
    // right after the cycle that dropped the first batch).
    await new Promise((resolve) => setImmediate(resolve))
    if (stopped()) return
    if (await batch() < DROP_BATCH) return
  }
}
