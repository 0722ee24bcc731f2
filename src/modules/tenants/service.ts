import type { Db } from '../../db/connect.ts'
import type { Tenant } from '../../db/schema.ts'
import { newId } from '../../lib/ids.ts'

export async function createTenant(db: Db, name: string, now: Date): Promise<Tenant> {
  const tenant = { id: newId('ten'), name, created_at: now.toISOString() }
  await db.insertInto('tenants').values(tenant).execute()
  return tenant
}

export function listTenants(db: Db): Promise<Tenant[]> {
  return db.selectFrom('tenants').selectAll().orderBy('id', 'desc').execute()
}

export function findTenant(db: Db, id: string): Promise<Tenant | undefined> {
  return db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst()
}
