// The PostgreSQL part of the benchmark: a database of its own on BENCH_PG_URL's server, or on a
// throwaway server started like the tests start theirs; seeded through kysely (tenants and keys
// through the services, orders in batched inserts shaped like the services write them).
import { sql } from 'kysely'
import pg from 'pg'
import { openDatabase, type OpenDb } from '../../src/db/connect.ts'
import { newId } from '../../src/lib/ids.ts'
import { createKey } from '../../src/modules/keys/service.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { startPgServer } from '../../test/helpers/pg-server.ts'
import { orderRow, type BenchTenant } from './seed.ts'

export interface PgBench {
  url: string
  opened: OpenDb
  close(): Promise<void>
}

export async function startPgBench(serverUrl = process.env.BENCH_PG_URL): Promise<PgBench> {
  const server = serverUrl ? undefined : await startPgServer()
  const base = serverUrl ?? server!.url
  const name = `travelops_bench_${process.pid}`
  const admin = new pg.Client({ connectionString: base })
  await admin.connect()
  await admin.query(`DROP DATABASE IF EXISTS ${name}`)
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(base)
  url.pathname = `/${name}`
  const opened = await openDatabase(url.toString(), { create: true, migrate: true })
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

export async function pgTenant(o: OpenDb, name: string, receiverUrl: string, hooks: string[][]): Promise<BenchTenant> {
  const now = new Date()
  const t = await createTenant(o.db, name, now)
  const k = await createKey(o.db, { tenantId: t.id, scopes: ['*'], rateLimit: 1_000_000_000 }, now)
  const webhookIds: string[] = []
  for (const [i, events] of hooks.entries()) {
    const id = newId('wh')
    await o.db.insertInto('webhooks').values({
      id, tenant_id: t.id, url: `${receiverUrl}/hook/${i}`, events: JSON.stringify(events), secret: `whsec_bench_${i}_0123456789abcdef`,
      headers: '{}', active: 1, retry_count: 3, created_at: now.toISOString(), updated_at: now.toISOString(),
    } as never).execute()
    webhookIds.push(id)
  }
  return { id: t.id, key: k.key, webhookIds }
}

/** `n` more orders in batches of 1000 (order numbers go on from the tenant's counter). */
export async function pgSeedOrders(o: OpenDb, tenantId: string, n: number): Promise<string[]> {
  const counter = await o.db.insertInto('counters').values({ tenant_id: tenantId, name: 'order', value: n })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doUpdateSet((eb) => ({ value: eb('counters.value', '+', n) })))
    .returning('value').executeTakeFirstOrThrow()
  const ids: string[] = []
  for (let done = 0; done < n; done += 1000) {
    const rows = Array.from({ length: Math.min(1000, n - done) }, (_, i) => orderRow(tenantId, counter.value - n + done + i + 1))
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
