import assert from 'node:assert/strict'
import type { EventName } from '../../src/events/catalog.ts'
import { newId } from '../../src/lib/ids.ts'
import { orderBody, type Reply, type TestApp, type TestTenant } from './app.ts'
import { scenarios, type Fixture, type Scenario } from './scenario.ts'

/** Test helpers for itineraries, invoices and payments. */

export function itineraryBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    title: 'Norwegian fjords',
    startDate: '2027-06-01',
    endDate: '2027-06-03',
    days: [
      { day: 1, date: '2027-06-01', title: 'Arrival in Bergen', items: ['Airport pick-up', 'Check-in'] },
      { day: 2, title: 'Fjord cruise', description: 'All day on the Sognefjord' },
    ],
    ...over,
  }
}

export function invoiceBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { lines: [{ description: 'Fjord cruise', quantity: 2, unitPrice: 149.5 }], currency: 'EUR', dueDate: '2027-05-01', ...over }
}

export function paymentBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { amount: 50, currency: 'EUR', method: 'card', ...over }
}

/** POST that must succeed; returns `data`. */
export async function create(t: TestTenant, path: string, body: unknown = undefined): Promise<any> {
  const r = await t.request('POST', path, body === undefined ? {} : { body })
  assert.ok(r.status === 201 || r.status === 200, `POST ${path} → ${r.status}: ${r.text}`)
  return r.body.data
}

export async function get(t: TestTenant, path: string): Promise<any> {
  const r = await t.request('GET', path)
  assert.equal(r.status, 200, `GET ${path}: ${r.text}`)
  return r.body.data
}

/** A customer row written straight to the database (the customers API is another module's). */
export async function insertCustomer(app: TestApp, tenantId: string): Promise<string> {
  const id = newId('cus')
  const now = new Date().toISOString()
  await app.server.deps.db.insertInto('customers').values({
    id, tenant_id: tenantId, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com',
    phone: null, address: null, notes: null, metadata: null, created_at: now, updated_at: now,
  }).execute()
  return id
}

export const createOrder = async (t: TestTenant): Promise<string> => (await create(t, '/v1/orders', orderBody())).id as string

export interface EventSeen {
  name: string
  tenant: string
  data: any
}

/** Reads the events table in order of writing; `take()` gives the rows written since the last call. */
export class EventLog {
  #seen = 0
  private readonly app: TestApp

  constructor(app: TestApp) {
    this.app = app
  }

  async take(): Promise<EventSeen[]> {
    const rows = await this.app.server.deps.db.selectFrom('events').selectAll().orderBy('id').execute()
    const fresh = rows.slice(this.#seen)
    this.#seen = rows.length
    return fresh.map((r) => {
      const payload = JSON.parse(r.payload)
      assert.equal(payload.tenant_id, r.tenant_id)
      assert.equal(payload.event, r.name)
      assert.equal(payload.id, r.id)
      return { name: r.name, tenant: r.tenant_id, data: payload.data }
    })
  }
}

const RESOURCE_PATHS: Record<string, string> = { iti: '/v1/itineraries/', inv: '/v1/invoices/', pay: '/v1/payments/', ord: '/v1/orders/' }

/**
 * Asserts that exactly the named events were written since the last take, for `t`'s tenant,
 * each with `data` equal to what GET returns for that record now.
 */
export async function assertEvents(log: EventLog, t: TestTenant, names: readonly EventName[]): Promise<EventSeen[]> {
  const seen = await log.take()
  assert.deepEqual(seen.map((e) => e.name), names, 'event names')
  for (const e of seen) {
    assert.equal(e.tenant, t.id, `${e.name}: tenant`)
    const path = RESOURCE_PATHS[String(e.data?.id).split('_')[0]!]
    assert.ok(path, `${e.name}: data has a known id (${e.data?.id})`)
    assert.deepEqual(e.data, await get(t, path + e.data.id), `${e.name}: data equals GET`)
  }
  return seen
}

export interface BillingFixture extends Fixture {
  log: EventLog
}

export type BillingScenario<F extends BillingFixture> = Scenario<F> & {
  /** Events the request must write (default: none). */
  events?: EventName[]
}

/** scenarios() where every row also checks the events the request wrote: exactly `events`, none by default. */
export function billingScenarios<F extends BillingFixture>(
  title: string,
  setup: (base: Fixture & { log: EventLog }) => Promise<F>,
  rows: BillingScenario<F>[],
): void {
  scenarios<F>(title, async (base) => {
    const log = new EventLog(base.app)
    const f = await setup({ ...base, log })
    await log.take()
    return f
  }, rows.map((row) => ({
    ...row,
    check: async (reply: Reply, f: F) => {
      await row.check?.(reply, f)
      await assertEvents(f.log, row.as === 'other' ? f.other : f.tenant, row.events ?? [])
    },
  })))
}

/** The `details` of a 422/400 as `path: message` lines, for matching. */
export const details = (r: Reply): string[] => (r.body?.error?.details ?? []).map((d: { path: string; message: string }) => `${d.path}: ${d.message}`)

/** Asserts one detail has exactly this path and a message matching `message`. */
export function assertDetail(r: Reply, path: string, message: RegExp = /./): void {
  const hit = (r.body?.error?.details ?? []).find((d: { path: string; message: string }) => d.path === path && message.test(d.message))
  assert.ok(hit, `expected a detail at '${path}' matching ${message}, got ${JSON.stringify(details(r))}`)
}
