import { READY_CAP, type Claim, type Claimed, type CycleResult, type DeliveryStore, type Disabled, type HealthPolicy, type Job, type Outcome, type QueuedWebhook } from '../../delivery/port.ts'
import { SQLITE_ADD_STATS, statsDeltas } from '../attempt-stats.ts'
import type { Db } from '../../db/connect.ts'
import { DROP_BATCH } from '../../db/drop-queue.ts'
import { exclusive, type SyncDb } from '../../db/exclusive.ts'
import { storedHeaders } from '../../delivery/stored-headers.ts'
import { dropQueue, SQLITE_DROP_BATCH } from './drop-queue.ts'
import { attemptTrigger } from '../../delivery/rules/attempt.ts'
import { endpointHealth } from '../../delivery/rules/health.ts'
import { webhookDisabledEvent } from '../../delivery/webhook-disabled.ts'
import type { WebhookRow } from '../../db/schema.ts'
import { writeEventSync } from './outbox.ts'

/** Every lease freed (serve's start): read through deliveries_leased (migration 0016), the deliveries being attempted, not the table. */
export const SQLITE_RECOVER = 'UPDATE deliveries SET locked_until = NULL, locked_by = NULL WHERE locked_until IS NOT NULL'

/**
 * The delivery worker's store on SQLite (see delivery/port.ts for what each call promises).
 * A worker cycle runs as one synchronous transaction (exclusive(): cached statements, no
 * kysely), because it is many small statements per delivery on the hottest loop of `serve`.
 * One `serve` per file (process-lock.ts), so recover() may free every lease at once.
 */
export function sqliteDeliveryStore(db: Db, health: HealthPolicy = { disableAfterMs: 0 }): DeliveryStore {
  return {
    recover: async () => {
      await exclusive(db, (q) => q.run(SQLITE_RECOVER), { write: true })
    },
    cycle: (outcomes, claim) => _cycle(db, outcomes, health, claim),
    renew: async (ids, owner, until) => {
      if (ids.length === 0) return
      await exclusive(db, (q) => q.run(`UPDATE deliveries SET locked_until = ? WHERE locked_by = ? AND id IN (SELECT value FROM json_each(?))`,
        until, owner, JSON.stringify(ids)), { write: true })
    },
    release: async (ids, owner) => {
      if (ids.length === 0) return
      await exclusive(db, (q) => q.run(`UPDATE deliveries SET locked_until = NULL, locked_by = NULL WHERE locked_by = ? AND id IN (SELECT value FROM json_each(?))`,
        owner, JSON.stringify(ids)), { write: true })
    },
    dropQueue: (tenantId, webhookId, stopped) => dropQueue(db, tenantId, webhookId, stopped),
  }
}

async function _cycle(db: Db, outcomes: Outcome[], health: HealthPolicy, claim?: Claim): Promise<CycleResult> {
  // Nothing to record: look first without the write lock (a wake often finds every
  // subscription with work at its limit, e.g. while receivers are slow).
  // The fast path (claim.queued: what a commit here just queued) plans once, without reading.
  let planned: ReturnType<Claim['plan']> | undefined
  if (outcomes.length === 0) {
    if (!claim) return { jobs: [], disabled: [] }
    planned = claim.queued ? claim.plan(claim.queued, claim.now) : await exclusive(db, (q) => claim.plan(_queuedWebhooks(q, claim.now), claim.now))
    if (planned.length === 0) return { jobs: [], disabled: [] }
  }
  return exclusive(db, (q) => {
    const disabled: Disabled[] = []
    const webhooks = new Map<string, _Webhook>()
    const recorded: Outcome[] = []
    for (const o of outcomes) {
      const webhook = _webhook(q, webhooks, o.job.webhook_id)
      if (_record(q, o, webhook.active)) {
        recorded.push(o)
        const d = _health(q, o, health, webhook)
        if (d) disabled.push(d)
      }
    }
    // The cycle's attempts added to attempt_stats at once: one statement, whatever the batch.
    if (recorded.length > 0) q.run(SQLITE_ADD_STATS, JSON.stringify(statsDeltas(recorded)))
    const jobs: Job[] = []
    if (claim) {
      const plan = claim.queued ? planned ?? claim.plan(claim.queued, claim.now) : claim.plan(_queuedWebhooks(q, claim.now), claim.now)
      for (const w of plan) {
        if (w.limit > 0) jobs.push(..._claim(q, w.webhook_id, w.limit, claim))
      }
    }
    return { jobs, disabled }
  }, { write: true })
}

/**
 * What a cycle knows of a subscription it records outcomes for, read once per cycle: whether it
 * is active (kept current as _health() disables it: nothing else writes it during the cycle's
 * transaction), and whether this cycle has already cleared its `failing_since` since its last
 * failure.
 */
interface _Webhook { active: boolean; cleared: boolean }

function _webhook(q: SyncDb, webhooks: Map<string, _Webhook>, id: string): _Webhook {
  let webhook = webhooks.get(id)
  if (!webhook) {
    webhook = { active: q.get<{ active: number }>('SELECT active FROM webhooks WHERE id = ?', id)?.active === 1, cleared: false }
    webhooks.set(id, webhook)
  }
  return webhook
}

/** Endpoint health after one recorded outcome (see HealthPolicy in delivery/port.ts). */
function _health(q: SyncDb, o: Outcome, health: HealthPolicy, webhook: _Webhook): Disabled | undefined {
  const id = o.job.webhook_id
  if (o.delivered) {
    if (!webhook.cleared) q.run('UPDATE webhooks SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL', id)
    webhook.cleared = true
    return undefined
  }
  webhook.cleared = false
  q.run('UPDATE webhooks SET failing_since = ? WHERE id = ? AND failing_since IS NULL', o.at, id)
  const w = q.get<{ active: number; failing_since: string | null }>('SELECT active, failing_since FROM webhooks WHERE id = ?', id)
  if (!w) return undefined
  const reason = endpointHealth({ active: w.active === 1, failingSince: w.failing_since }, o, health.disableAfterMs).disable
  if (!reason) return undefined
  q.run('UPDATE webhooks SET active = 0, disabled_at = ?, disabled_reason = ?, updated_at = ? WHERE id = ?', o.at, reason, o.at, id)
  webhook.active = false
  q.run(SQLITE_DROP_BATCH, id, id, o.job.tenant_id) // the first batch of its queue; the worker drops the rest (dropQueue())
  // CONTRACT §15: `webhook.disabled`, in this transaction, through the outbox writer every event
  // goes through; the claim at the end of this cycle finds its deliveries due.
  const event = webhookDisabledEvent(q.get<WebhookRow>('SELECT * FROM webhooks WHERE id = ?', id)!, o.at)
  writeEventSync(q, event)
  return { webhook_id: id, tenant_id: o.job.tenant_id, reason, event_id: event.id }
}

/**
 * Subscriptions with queued deliveries (due now or later), each with its tenant and earliest
 * unleased due time: one index seek per subscription (deliveries_webhook_due), however long
 * the queues are.
 */
function _queuedWebhooks(q: SyncDb, now: string): QueuedWebhook[] {
  return q.all<QueuedWebhook>(`
    WITH RECURSIVE webhook_ids(id) AS (
      SELECT (SELECT webhook_id FROM deliveries WHERE due_at IS NOT NULL ORDER BY webhook_id LIMIT 1)
      UNION ALL
      SELECT (SELECT webhook_id FROM deliveries WHERE due_at IS NOT NULL AND webhook_id > webhook_ids.id ORDER BY webhook_id LIMIT 1)
      FROM webhook_ids WHERE webhook_ids.id IS NOT NULL)
    SELECT webhook_ids.id AS webhook_id, w.tenant_id AS tenant_id,
      (SELECT due_at FROM deliveries WHERE webhook_id = webhook_ids.id AND due_at IS NOT NULL AND (locked_until IS NULL OR locked_until < ?)
        ORDER BY due_at LIMIT 1) AS due,
      (SELECT count(*) FROM (SELECT 1 FROM deliveries WHERE webhook_id = webhook_ids.id AND due_at IS NOT NULL AND due_at <= ?
        AND (locked_until IS NULL OR locked_until < ?) LIMIT ${READY_CAP})) AS ready
    FROM webhook_ids JOIN webhooks w ON w.id = webhook_ids.id WHERE webhook_ids.id IS NOT NULL`, now, now, now)
}

/**
 * Up to `limit` due, unleased deliveries of one subscription, oldest due first, with what
 * sending needs; none if the subscription is no longer active (its due ones are dropped, at most
 * DROP_BATCH a cycle: the drop that made it inactive takes care of its whole queue).
 *
 * Every statement here that drops a subscription's queue is `UPDATE OR FAIL`: inside a
 * transaction SQLite otherwise keeps a statement journal (in memory: temp_store=MEMORY) of every
 * page the statement changes, so that a CHECK failing halfway could undo only that statement —
 * +24 MB of RSS for 10,000 queued deliveries.
 * These statements cannot fail a CHECK (status becomes 'failed' or stays), and if one failed
 * anyway the whole transaction is rolled back, so the statement's own undo is never needed.
 */
function _claim(q: SyncDb, webhookId: string, limit: number, c: Claim): Job[] {
  const h = q.get<{ url: string; secret: string; headers: string; active: number; deleted_at: string | null; retry_count: number }>(
    'SELECT url, secret, headers, active, deleted_at, retry_count FROM webhooks WHERE id = ?', webhookId)
  const exclude = c.exclude?.length ? c.exclude : undefined
  const due = `webhook_id = ? AND due_at IS NOT NULL AND due_at <= ? AND (locked_until IS NULL OR locked_until < ?)${exclude ? ' AND id NOT IN (SELECT value FROM json_each(?))' : ''}`
  const dueArgs = exclude ? [webhookId, c.now, c.now, JSON.stringify(exclude)] : [webhookId, c.now, c.now]
  if (!h || h.active !== 1 || h.deleted_at !== null) {
    q.run(`UPDATE OR FAIL deliveries SET due_at = NULL, next_retry_at = NULL, manual = 0, locked_until = NULL, locked_by = NULL,
      status = CASE WHEN status = 'pending' THEN 'failed' ELSE status END WHERE id IN (SELECT id FROM deliveries WHERE ${due} LIMIT ${DROP_BATCH})`, ...dueArgs)
    return []
  }
  const claimed = q.all<Claimed>(`
    UPDATE deliveries SET locked_until = ?, locked_by = ?
    WHERE id IN (SELECT id FROM deliveries WHERE ${due} ORDER BY due_at LIMIT ?)
    RETURNING id, tenant_id, webhook_id, event_id, event, attempts, retries, manual, next_retry_at, status`, c.leaseUntil, c.owner, ...dueArgs, limit)
  const headers = storedHeaders(h.headers)
  return claimed.map((row) => {
    const e = q.get<{ payload: string; created_at: string }>('SELECT payload, created_at FROM events WHERE id = ?', row.event_id)!
    return { ...row, owner: c.owner, url: h.url, secret: h.secret, headers, retryCount: h.retry_count, payload: e.payload, eventAt: e.created_at }
  })
}

/**
 * Queue state after an attempt. `manual` counts retries asked for and not yet served; one asked
 * for while this attempt was in flight (manual > what was claimed) stays queued, due now. A
 * subscription that stopped being active while the attempt was in flight (disabled by another
 * outcome, deactivated, deleted) gets nothing queued: its queue was dropped then (§11).
 * Parameters while active: next automatic time, claimed manual, attempt time, next automatic time, claimed manual.
 * The rule is afterAttempt() (delivery/rules/queue-state.ts); test/db/delivery-rules-agree.test.ts
 * holds this SQL, and PostgreSQL's, to it.
 */
const _AFTER_ATTEMPT = `next_retry_at = ?, due_at = CASE WHEN manual > ? THEN ? ELSE ? END, manual = max(manual - ?, 0),
  locked_until = NULL, locked_by = NULL`
const _AFTER_ATTEMPT_INACTIVE = 'next_retry_at = NULL, due_at = NULL, manual = 0, locked_until = NULL, locked_by = NULL'

/**
 * The attempt row (numbered from the row itself, so a late outcome never collides with another
 * worker's) and the delivery's new state. If the lease was lost meanwhile (the holder changed),
 * only the attempt is counted; the queue state is the new holder's to write.
 */
function _record(q: SyncDb, o: Outcome, active: boolean): boolean {
  const j = o.job
  const inserted = q.run(`INSERT INTO delivery_attempts (delivery_id, attempt, tenant_id, at, trigger, response_code, duration_ms, error, response_body)
    SELECT id, attempts + 1, tenant_id, ?, ?, ?, ?, ?, ? FROM deliveries WHERE id = ?`,
  o.at, attemptTrigger(j), o.responseCode, o.durationMs, o.error, o.responseBody, j.id)
  if (inserted.changes === 0) return false
  const delivered = o.delivered ? `status = 'delivered', delivered_at = ?,` : ''
  const params = o.delivered ? [o.at] : []
  const after = active ? [o.nextRetryAt, j.manual, o.at, o.nextRetryAt, j.manual] : []
  const held = q.run(`UPDATE deliveries SET ${delivered || "status = 'failed',"} attempts = attempts + 1, retries = ?, response_code = ?, last_attempt_at = ?,
    ${active ? _AFTER_ATTEMPT : _AFTER_ATTEMPT_INACTIVE} WHERE id = ? AND locked_by = ?`,
  ...params, o.retries, o.responseCode, o.at, ...after, j.id, j.owner)
  if (held.changes === 0) {
    q.run(`UPDATE deliveries SET attempts = attempts + 1, last_attempt_at = ?, response_code = ?${o.delivered ? ", status = 'delivered', delivered_at = ?" : ''} WHERE id = ?`,
      o.at, o.responseCode, ...params, j.id)
  }
  return true
}
