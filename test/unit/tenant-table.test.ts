import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { openDb } from '../../src/engine/sqlite/open.ts'
import { tenantTable } from '../../src/db/tenant-table.ts'
import type { Tx } from '../../src/db/tx.ts'
import { newId } from '../../src/lib/ids.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'

test('tenantTable never reads, changes or deletes another tenant\'s rows', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'travelops-tt-'))
  const { db, close } = openDb(join(dir, 't.db'))
  try {
    const a = await createTenant(db, 'A', new Date())
    const b = await createTenant(db, 'B', new Date())
    const suppliers = tenantTable('suppliers')
    const row = (tenant: string) => ({
      id: newId('sup'), tenant_id: tenant, name: 'Hotel', type: 'hotel', email: null, phone: null, address: null,
      notes: null, metadata: null, created_at: new Date().toISOString(), updated_at: new Date().toISOString(),
    })
    const mine = row(a.id)
    const theirs = row(b.id)
    await suppliers.insert(db, mine)
    await suppliers.insert(db, theirs)
    assert.equal((await suppliers.find(db, a.id, mine.id))?.id, mine.id)
    assert.equal(await suppliers.find(db, a.id, theirs.id), undefined)
    assert.deepEqual((await suppliers.list(db, a.id, { limit: 10 })).map((r) => r.id), [mine.id])
    await db.transaction().execute(async (tx: Tx) => {
      await suppliers.update(tx, a.id, theirs.id, { name: 'Taken over' })
      assert.equal(await suppliers.remove(tx, a.id, theirs.id), false)
    })
    assert.equal((await suppliers.find(db, b.id, theirs.id))?.name, 'Hotel')
    assert.equal((await suppliers.findBy(db, a.id, { name: 'Hotel' }))?.id, mine.id)
  } finally {
    await close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('architecture: modules reach tenant tables only through tenantTable (the listed exceptions say why)', () => {
  const allowed: Record<string, string> = {
    'keys/service.ts': 'api_keys is administered by the CLI across tenants',
    'tenants/service.ts': 'tenants is the one table that is not per tenant',
    'webhooks/repo.ts': 'delivery queries join events; each starts from deliveries.tenant_id',
    'webhooks/operator.ts': 'the operator CLI spans tenants on purpose',
    'orders/repo.ts': 'the benchmarked hot path uses compiled() statements; each still starts from tenant_id',
    'events/repo.ts': 'the events list reads oldest first too and merges one index range per name, which tenantTable.list() cannot; each statement starts from tenant_id',
    'dashboard/sessions.ts': 'sign-ins belong to the installation (the operator\'s have no tenant); found by their token\'s hash',
    'dashboard/api.ts': 'the operator\'s tenant summaries span tenants on purpose (operator-only routes); a session is read by its own id',
  }
  const root = fileURLToPath(new URL('../../src/modules/', import.meta.url))
  const files: string[] = []
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f)
      if (statSync(p).isDirectory()) walk(p)
      else if (p.endsWith('.ts')) files.push(p.slice(root.length))
    }
  }
  walk(root)
  assert.ok(files.length > 30)
  const offenders = files.filter((f) => !(f in allowed) && /\.(selectFrom|updateTable|deleteFrom|insertInto)\(/.test(readFileSync(join(root, f), 'utf8')))
  assert.deepEqual(offenders, [])
})
