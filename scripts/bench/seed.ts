// Test data for the benchmark, written straight into the SQLite file by the orchestrator
// (not through HTTP): tenants and keys through the services, orders, events and deliveries
// as raw prepared inserts in one transaction, shaped exactly like the services write them.
import type { OpenSqliteDb as OpenDb } from '../../src/engine/port.ts'
import type { OrderRow } from '../../src/db/schema.ts'
import { newId } from '../../src/lib/ids.ts'
import { createKey } from '../../src/modules/keys/service.ts'
import { toOrder } from '../../src/modules/orders/index.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'

export interface BenchTenant {
  id: string
  key: string
  webhookIds: string[]
}

/** A tenant with a key of its own (rate limit far above anything the benchmark sends) and `webhooks` subscriptions. */
export async function benchTenant(o: OpenDb, name: string, receiverUrl: string, webhooks: string[][]): Promise<BenchTenant> {
  const now = new Date()
  const t = await createTenant(o.db, name, now)
  const k = await createKey(o.engine, { tenantId: t.id, scopes: ['*'], rateLimit: 1_000_000_000 }, now)
  const insert = o.sqlite.prepare(`INSERT INTO webhooks (id, tenant_id, url, events, secret, headers, active, retry_count, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, '{}', 1, 3, ?, ?)`)
  const webhookIds = webhooks.map((events, i) => {
    const id = newId('wh')
    insert.run(id, t.id, `${receiverUrl}/hook/${i}`, JSON.stringify(events), `whsec_bench_${i}_0123456789abcdef`, now.toISOString(), now.toISOString())
    return id
  })
  return { id: t.id, key: k.key, webhookIds }
}

/** `n` more keys of the tenant, with every scope: event streams are at most 5 per key. */
export async function streamKeys(o: OpenDb, tenantId: string, n: number): Promise<string[]> {
  const keys: string[] = []
  for (let i = 0; i < n; i++) keys.push((await createKey(o.engine, { tenantId, scopes: ['*'], rateLimit: 1_000_000_000 }, new Date())).key)
  return keys
}

/** Takes `n` order numbers from the tenant's counter (call it inside the seeding transaction); returns the one before the first. */
export function reserveOrderNumbers(o: OpenDb, tenantId: string, n: number): number {
  const last = (o.sqlite.prepare(`INSERT INTO counters (tenant_id, name, value) VALUES (?, 'order', ?)
    ON CONFLICT (tenant_id, name) DO UPDATE SET value = value + excluded.value RETURNING value`).get(tenantId, n) as { value: number }).value
  return last - n
}

/** `n` more orders for the tenant (order numbers go on from its counter); returns their ids. */
export function seedOrders(o: OpenDb, tenantId: string, n: number): string[] {
  const insert = o.sqlite.prepare(`INSERT INTO orders (id, tenant_id, order_number, status, customer_id, customer, items, total, currency,
    travel_date, notes, metadata, created_at, updated_at) VALUES (@id, @tenant_id, @order_number, @status, @customer_id, @customer, @items,
    @total, @currency, @travel_date, @notes, @metadata, @created_at, @updated_at)`)
  const ids: string[] = []
  o.sqlite.transaction(() => {
    const first = reserveOrderNumbers(o, tenantId, n)
    for (let i = 0; i < n; i++) {
      const row = orderRow(tenantId, first + i + 1)
      insert.run(row)
      ids.push(row.id)
    }
  })()
  return ids
}

/**
 * `events` order.created events of the tenant, each with one pending delivery per subscription,
 * all due at `dueAt`. Returns the bodies the worker will send, one per delivery.
 */
export function seedDeliveries(o: OpenDb, tenantId: string, webhookIds: string[], events: number, dueAt: Date): string[] {
  const ev = o.sqlite.prepare('INSERT INTO events (id, tenant_id, name, payload, created_at) VALUES (?, ?, ?, ?, ?)')
  const del = o.sqlite.prepare(`INSERT INTO deliveries (id, tenant_id, webhook_id, event_id, event, status, attempts, retries, manual, created_at, due_at)
    VALUES (?, ?, ?, ?, 'order.created', 'pending', 0, 0, 0, ?, ?)`)
  const bodies: string[] = []
  const due = dueAt.toISOString()
  o.sqlite.transaction(() => {
    for (let i = 0; i < events; i++) {
      const id = newId('evt')
      const at = new Date().toISOString()
      const payload = JSON.stringify({ id, event: 'order.created', timestamp: at, tenant_id: tenantId, data: toOrder(orderRow(tenantId, i + 1)) })
      ev.run(id, tenantId, 'order.created', payload, at)
      for (const webhook of webhookIds) {
        del.run(newId('del'), tenantId, webhook, id, at, due)
        bodies.push(payload)
      }
    }
  })()
  return bodies
}

/** The body `POST /v1/orders` is sent in the write figure (and the latency run). */
export const ORDER_BODY = JSON.stringify({
  customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0958' },
  items: [
    { description: 'Fjord cruise, two nights', quantity: 2, unitPrice: 149.5 },
    { description: 'Airport transfer', quantity: 1, unitPrice: 35 },
  ],
  currency: 'EUR',
  travelDate: '2027-06-01',
  notes: 'Window seats if possible',
  metadata: { channel: 'website', campaign: 'spring' },
})

export function orderRow(tenantId: string, n: number): OrderRow {
  const now = new Date().toISOString()
  return {
    id: newId('ord'),
    tenant_id: tenantId,
    order_number: `ORD-${String(n).padStart(6, '0')}`,
    status: (['pending', 'confirmed', 'cancelled', 'completed'] as const)[n % 4]!,
    customer_id: null,
    customer: JSON.stringify({ firstName: 'Ada', lastName: `Lovelace ${n}`, email: `ada${n}@example.com`, phone: '+44 20 7946 0958' }),
    items: JSON.stringify([
      { productId: null, description: 'Fjord cruise, two nights', quantity: 2, unitPrice: 14950 },
      { productId: null, description: 'Airport transfer', quantity: 1, unitPrice: 3500 },
    ]),
    total: 33400,
    currency: 'EUR',
    travel_date: '2027-06-01',
    notes: n % 3 === 0 ? 'Window seats if possible' : null,
    metadata: JSON.stringify({ channel: 'website', campaign: 'spring' }),
    created_at: now,
    updated_at: now,
  }
}

/** What the orchestrator reads and writes directly in the database, the same on both engines. */
export interface BenchDb {
  tenant(name: string, receiverUrl: string, webhooks: string[][]): Promise<BenchTenant>
  /** See seedDeliveries(). */
  seedDeliveries(tenantId: string, webhookIds: string[], events: number, dueAt: Date): Promise<string[]>
  /** Every queued delivery of the tenant becomes due at `at`. */
  setDue(tenantId: string, at: Date): Promise<void>
  delivered(tenantId: string): Promise<number>
  /**
   * Deliveries of these subscriptions not finished yet (queued or in flight: `due_at` set). One
   * range of deliveries_webhook_due per subscription, so it costs the same however much history
   * the tenant has; delivered() counts that history (≈ 0.4 s at 1 M rows on SQLite).
   */
  unfinished(webhookIds: string[]): Promise<number>
  /** Deliveries of the tenant under a lease (attempts in flight). */
  inFlight(tenantId: string): Promise<number>
  /** Deliveries of the tenant with at least one attempt recorded. */
  attempted(tenantId: string): Promise<number>
  /** Deliveries of the tenant that took more than one attempt (a failure retried after its backoff). */
  retried(tenantId: string): Promise<number>
  /** Deliveries queued, of any tenant. */
  queued(): Promise<number>
  orders(tenantId: string): Promise<number>
  deactivateWebhooks(tenantId: string): Promise<void>
}

export function sqliteBenchDb(o: OpenDb): BenchDb {
  const count = (sql: string) => {
    const st = o.sqlite.prepare(sql)
    return async (...params: unknown[]) => (st.get(...params) as { n: number }).n
  }
  const delivered = count("SELECT count(*) AS n FROM deliveries WHERE tenant_id = ? AND status = 'delivered'")
  const inFlight = count('SELECT count(*) AS n FROM deliveries WHERE tenant_id = ? AND locked_until IS NOT NULL')
  const retried = count('SELECT count(*) AS n FROM deliveries WHERE tenant_id = ? AND attempts > 1')
  const attempted = count('SELECT count(*) AS n FROM deliveries WHERE tenant_id = ? AND attempts > 0')
  const queued = count('SELECT count(*) AS n FROM deliveries WHERE due_at IS NOT NULL')
  const orders = count('SELECT count(*) AS n FROM orders WHERE tenant_id = ?')
  const unfinished = count("SELECT count(*) AS n FROM deliveries WHERE webhook_id IN (SELECT value FROM json_each(?)) AND due_at IS NOT NULL")
  return {
    tenant: (name, url, webhooks) => benchTenant(o, name, url, webhooks),
    seedDeliveries: async (tenantId, webhooks, events, dueAt) => seedDeliveries(o, tenantId, webhooks, events, dueAt),
    setDue: async (tenantId, at) => {
      o.sqlite.prepare('UPDATE deliveries SET due_at = ? WHERE tenant_id = ? AND due_at IS NOT NULL').run(at.toISOString(), tenantId)
    },
    delivered: (tenantId) => delivered(tenantId),
    unfinished: (webhookIds) => unfinished(JSON.stringify(webhookIds)),
    inFlight: (tenantId) => inFlight(tenantId),
    attempted: (tenantId) => attempted(tenantId),
    retried: (tenantId) => retried(tenantId),
    queued: () => queued(),
    orders: (tenantId) => orders(tenantId),
    deactivateWebhooks: async (tenantId) => {
      o.sqlite.prepare('UPDATE webhooks SET active = 0 WHERE tenant_id = ?').run(tenantId)
    },
  }
}
