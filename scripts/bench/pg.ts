// The PostgreSQL part of the benchmark: a database of its own on BENCH_PG_URL's server, or on a
// throwaway server started like the tests start theirs; seeded through kysely (tenants and keys
// through the services, orders in batched inserts shaped like the services write them).
import { sql } from 'kysely'
import pg from 'pg'
import { type OpenDb } from '../../src/engine/port.ts'
import { openDatabase } from '../../src/engine/open.ts'
import { newId } from '../../src/lib/ids.ts'
import { createKey } from '../../src/modules/keys/service.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { startPgServer } from '../../test/helpers/pg-server.ts'
import { toOrder } from '../../src/modules/orders/index.ts'
import { orderRow, type BenchDb, type BenchTenant } from './seed.ts'

export interface PgBench {
  url: string
  opened: OpenDb
  close(): Promise<void>
}

/** A fresh database `travelops_bench_<pid>[_<suffix>]` on BENCH_PG_URL's server, or on a server of its own. */
export async function startPgBench(serverUrl = process.env.BENCH_PG_URL || undefined, suffix = ''): Promise<PgBench> {
  const server = serverUrl ? undefined : await startPgServer()
  const base = serverUrl ?? server!.url
  const name = `travelops_bench_${process.pid}${suffix ? `_${suffix}` : ''}`
  const url = new URL(base)
  url.pathname = `/${name}`
  let opened: OpenDb
  try {
    const admin = new pg.Client({ connectionString: base })
    await admin.connect()
    await admin.query(`DROP DATABASE IF EXISTS ${name}`)
    await admin.query(`CREATE DATABASE ${name}`)
    await admin.end()
    opened = await openDatabase(url.toString(), { create: true, migrate: true })
  } catch (err) {
    await server?.stop().catch(() => {}) // a server of its own is not left running
    throw err
  }
  return {
    url: url.toString(),
    opened,
    close: async () => {
      await opened.close()
      if (server) return server.stop()
      const drop = new pg.Client({ connectionString: base })
      await drop.connect()
      await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await drop.end()
    },
  }
}

export async function pgTenant(o: OpenDb, name: string, receiverUrl: string, webhooks: string[][]): Promise<BenchTenant> {
  const now = new Date()
  const t = await createTenant(o.db, name, now)
  const k = await createKey(o.engine, { tenantId: t.id, scopes: ['*'], rateLimit: 1_000_000_000 }, now)
  const webhookIds: string[] = []
  for (const [i, events] of webhooks.entries()) {
    const id = newId('wh')
    await o.db.insertInto('webhooks').values({
      id, tenant_id: t.id, url: `${receiverUrl}/hook/${i}`, events: JSON.stringify(events), secret: `whsec_bench_${i}_0123456789abcdef`,
      headers: '{}', active: 1, retry_count: 3, created_at: now.toISOString(), updated_at: now.toISOString(),
    } as never).execute()
    webhookIds.push(id)
  }
  return { id: t.id, key: k.key, webhookIds }
}

/** Takes `n` order numbers from the tenant's counter; returns the one before the first. */
export async function pgReserveOrderNumbers(o: OpenDb, tenantId: string, n: number): Promise<number> {
  const counter = await o.db.insertInto('counters').values({ tenant_id: tenantId, name: 'order', value: n })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doUpdateSet((eb) => ({ value: eb('counters.value', '+', n) })))
    .returning('value').executeTakeFirstOrThrow()
  return Number(counter.value) - n
}

/** `n` more orders in batches of 1000 (order numbers go on from the tenant's counter). */
export async function pgSeedOrders(o: OpenDb, tenantId: string, n: number): Promise<string[]> {
  const first = await pgReserveOrderNumbers(o, tenantId, n)
  const ids: string[] = []
  for (let done = 0; done < n; done += 1000) {
    const rows = Array.from({ length: Math.min(1000, n - done) }, (_, i) => orderRow(tenantId, first + done + i + 1))
    await o.db.insertInto('orders').values(rows).execute()
    ids.push(...rows.map((r) => r.id))
  }
  await sql`analyze`.execute(o.db)
  return ids
}

export async function pgQueued(o: OpenDb): Promise<number> {
  const row = await o.db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('due_at', 'is not', null).executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function pgOrders(o: OpenDb, tenantId: string): Promise<number> {
  const row = await o.db.selectFrom('orders').select((eb) => eb.fn.countAll<number>().as('n')).where('tenant_id', '=', tenantId).executeTakeFirstOrThrow()
  return Number(row.n)
}

export function pgBenchDb(o: OpenDb): BenchDb {
  const n = async (q: Promise<{ rows: { n: unknown }[] }>) => Number((await q).rows[0]?.n ?? 0)
  return {
    tenant: (name, url, webhooks) => pgTenant(o, name, url, webhooks),
    seedDeliveries: async (tenantId, webhookIds, events, dueAt) => {
      const bodies: string[] = []
      const due = dueAt.toISOString()
      for (let done = 0; done < events; done += 500) {
        const evs: Record<string, unknown>[] = []
        const dels: Record<string, unknown>[] = []
        for (let i = done; i < Math.min(events, done + 500); i++) {
          const id = newId('evt')
          const at = new Date().toISOString()
          const payload = JSON.stringify({ id, event: 'order.created', timestamp: at, tenant_id: tenantId, data: toOrder(orderRow(tenantId, i + 1)) })
          evs.push({ id, tenant_id: tenantId, name: 'order.created', payload, created_at: at })
          for (const webhook of webhookIds) {
            dels.push({ id: newId('del'), tenant_id: tenantId, webhook_id: webhook, event_id: id, event: 'order.created', status: 'pending', attempts: 0, retries: 0, manual: 0, created_at: at, due_at: due })
            bodies.push(payload)
          }
        }
        await o.db.transaction().execute(async (tx) => {
          await tx.insertInto('events').values(evs as never).execute()
          await tx.insertInto('deliveries').values(dels as never).execute()
        })
      }
      // Fresh statistics, as autovacuum would have them a minute later: on a new database the
      // planner otherwise still takes these tables for empty, and the figure depends on when
      // autovacuum happened to run (a delivery loop at 1.6 k/s in one run, 5.1 k/s in the next).
      await sql`ANALYZE events, deliveries`.execute(o.db)
      return bodies
    },
    setDue: async (tenantId, at) => {
      await sql`UPDATE deliveries SET due_at = ${at.toISOString()} WHERE tenant_id = ${tenantId} AND due_at IS NOT NULL`.execute(o.db)
    },
    delivered: (tenantId) => n(sql<{ n: unknown }>`SELECT count(*) AS n FROM deliveries WHERE tenant_id = ${tenantId} AND status = 'delivered'`.execute(o.db)),
    unfinished: (webhookIds) => n(sql<{ n: unknown }>`SELECT count(*) AS n FROM deliveries WHERE webhook_id = ANY(${webhookIds}::text[]) AND due_at IS NOT NULL`.execute(o.db)),
    inFlight: (tenantId) => n(sql<{ n: unknown }>`SELECT count(*) AS n FROM deliveries WHERE tenant_id = ${tenantId} AND locked_until IS NOT NULL`.execute(o.db)),
    attempted: (tenantId) => n(sql<{ n: unknown }>`SELECT count(*) AS n FROM deliveries WHERE tenant_id = ${tenantId} AND attempts > 0`.execute(o.db)),
    retried: (tenantId) => n(sql<{ n: unknown }>`SELECT count(*) AS n FROM deliveries WHERE tenant_id = ${tenantId} AND attempts > 1`.execute(o.db)),
    queued: () => pgQueued(o),
    orders: (tenantId) => pgOrders(o, tenantId),
    deactivateWebhooks: async (tenantId) => {
      await sql`UPDATE webhooks SET active = 0 WHERE tenant_id = ${tenantId}`.execute(o.db)
    },
  }
}
