import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { DEFAULT_CONFIG } from '../../src/config.ts'
import { withTx } from '../../src/engine/tx.ts'
import { emit } from '../../src/events/emit.ts'
import type { EventName } from '../../src/events/catalog.ts'
import type { FreshWork } from '../../src/context.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { openWithStore, queryRows } from '../helpers/engine.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { insertWebhook } from '../helpers/store.ts'

/**
 * An event's fan-out: one delivery per active subscription of its tenant that asked for the
 * event or for `*`, on both engines (PostgreSQL matches in SQL and sends as many delivery ids
 * as the tenant's last event needed, with a second statement for the rest: a tenant whose
 * subscriptions grow between two events takes that path).
 */
describe('fan-out: which subscriptions an event reaches', () => {
  let app: TestApp
  let opened: Awaited<ReturnType<typeof openWithStore>>['opened']
  const tenants: { id: string; keyId: string }[] = []
  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true })
    for (const name of ['A', 'B']) {
      const t = await app.tenant(name)
      tenants.push({ id: t.id, keyId: t.keyId })
    }
    await app.server.stop(0) // nothing delivers: the rows stay as the fan-out wrote them
    ;({ opened } = await openWithStore(app.dbFile))
  })
  after(async () => {
    await opened?.close()
    await app.close()
  })

  let n = 0
  const addWebhook = (tenantId: string, events: string[], extra: { active?: number; deleted_at?: string } = {}) =>
    insertWebhook(opened.db, tenantId, { id: `wh_${String(++n).padStart(3, '0')}_${crypto.randomUUID()}`, events: JSON.stringify(events), secret: 'fan-out-secret', ...extra })
  /** What each commit told the worker it queued (notify's argument): the subscriptions, for the fast path. */
  const told: FreshWork[] = []
  const fire = async (tenant: { id: string; keyId: string }, event: EventName, fail = false) => {
    const notify = (fresh?: FreshWork) => void told.push(fresh!)
    const ctx = { db: opened.db, engine: opened.engine, clock: systemClock, config: DEFAULT_CONFIG, logger: createLogger('silent'), notify, tenantId: tenant.id, keyId: tenant.keyId }
    return withTx(opened.engine, async (scope) => {
      const envelope = await emit(scope, ctx, event, { id: 'ord_x' })
      if (fail) throw new Error('rolled back')
      return envelope.id
    })
  }
  const deliveries = (eventId: string) => queryRows<{ id: string; webhook_id: string; tenant_id: string; event: string; status: string; due_at: string | null }>(
    app.dbFile, 'SELECT id, webhook_id, tenant_id, event, status, due_at FROM deliveries WHERE event_id = ? ORDER BY webhook_id', eventId)

  test('no subscription, then more than the first event sent ids for, then more again: every matching one gets exactly one delivery', async () => {
    const [a, b] = tenants as [typeof tenants[0], typeof tenants[0]]
    const none = await fire(a, 'order.created')
    assert.deepEqual(await deliveries(none), [])
    assert.equal(told.length, 0, 'no delivery queued, nothing to tell the worker')
    assert.equal((await queryRows(app.dbFile, 'SELECT id FROM events WHERE id = ?', none)).length, 1, 'the event is written even when nobody listens')

    const wanted = [await addWebhook(a.id, ['*']), await addWebhook(a.id, ['order.created']), await addWebhook(a.id, ['order.cancelled', 'order.created'])]
    for (let i = 0; i < 3; i++) wanted.push(await addWebhook(a.id, ['*']))
    await addWebhook(a.id, ['order.confirmed']) // another event
    await addWebhook(a.id, ['*'], { active: 0 }) // paused
    await addWebhook(a.id, ['*'], { deleted_at: new Date().toISOString() }) // deleted
    await addWebhook(b.id, ['*']) // another tenant's
    await addWebhook(a.id, ['order.create']) // a prefix of the name is not the name

    const six = await fire(a, 'order.created')
    const rows = await deliveries(six)
    assert.deepEqual(rows.map((r) => r.webhook_id), [...wanted].sort())
    assert.ok(rows.every((r) => r.tenant_id === a.id && r.event === 'order.created' && r.status === 'pending' && r.due_at !== null))
    assert.equal(new Set(rows.map((r) => r.id)).size, 6)
    assert.ok(rows.every((r) => r.id.startsWith('del_')))
    assert.deepEqual(told.map((f) => ({ ...f, webhookIds: [...f.webhookIds].sort() })), [{ tenantId: a.id, webhookIds: [...wanted].sort() }],
      'after the commit, the worker is told exactly the subscriptions given a delivery')

    for (let i = 0; i < 5; i++) wanted.push(await addWebhook(a.id, ['order.created']))
    const eleven = await fire(a, 'order.created')
    assert.deepEqual((await deliveries(eleven)).map((r) => r.webhook_id), [...wanted].sort())
    assert.deepEqual([...told.at(-1)!.webhookIds].sort(), [...wanted].sort(), 'the subscriptions past the ids sent along too')

    const confirmed = await fire(a, 'order.confirmed')
    assert.equal((await deliveries(confirmed)).length, 4 + 1, "the four '*' and the one for order.confirmed")
    assert.equal((await deliveries(await fire(b, 'order.created'))).length, 1)
  })

  test('an event whose transaction rolls back leaves neither the event nor a delivery', async () => {
    const a = tenants[0]!
    const before = await queryRows<{ n: number }>(app.dbFile, 'SELECT count(*) AS n FROM deliveries')
    const toldBefore = told.length
    await assert.rejects(fire(a, 'order.created', true), /rolled back/)
    assert.equal(told.length, toldBefore, 'nothing told after a rollback')
    assert.deepEqual(await queryRows<{ n: number }>(app.dbFile, 'SELECT count(*) AS n FROM deliveries'), before)
  })
})
