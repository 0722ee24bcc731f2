import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { migrate } from '../../src/engine/sqlite/migrate.ts'
import { migratePostgres } from '../../src/engine/postgres/migrate.ts'
import { loadMigrationFiles } from '../../src/db/migration-files.ts'
import { openPostgres } from '../../src/engine/postgres/pool.ts'
import { openSqlite } from '../../src/engine/sqlite/sqlite.ts'
import { newPgDatabase, queryRows } from '../helpers/engine.ts'

// Migration 0013 on a database that already has attempts (both engines): attempt_stats starts
// as those attempts summed per (tenant, hour, subscription, duration), 2xx answers counted apart.

const T = 'ten_00000000-0000-7000-8000-000000000001'
const WEBHOOKS = ['wh_00000000-0000-7000-8000-00000000000a', 'wh_00000000-0000-7000-8000-00000000000b']
const CODES = [200, 201, 500, null, 299, 300]

/** The rows of 0012's schema: one tenant, two subscriptions, 60 deliveries with 1–3 attempts each over three hours. */
function rows(): [string, Record<string, unknown>][] {
  const now = '2026-03-01T10:00:00.000Z'
  const out: [string, Record<string, unknown>][] = [['tenants', { id: T, name: 'Backfill', created_at: now }]]
  for (const id of WEBHOOKS) out.push(['webhooks', { id, tenant_id: T, url: 'http://127.0.0.1:9/', events: '["*"]', secret: 's', headers: '{}', active: 1, retry_count: 3, created_at: now, updated_at: now }])
  for (let i = 0; i < 60; i++) {
    const evt = `evt_00000000-0000-7000-8000-${String(i).padStart(12, '0')}`
    const del = `del_00000000-0000-7000-8000-${String(i).padStart(12, '0')}`
    out.push(['events', { id: evt, tenant_id: T, name: 'order.created', payload: '{}', created_at: now }])
    out.push(['deliveries', { id: del, tenant_id: T, webhook_id: WEBHOOKS[i % 2], event_id: evt, event: 'order.created', status: 'failed', attempts: 1 + (i % 3), retries: 0, created_at: now, manual: 0 }])
    for (let a = 1; a <= 1 + (i % 3); a++) {
      const at = new Date(Date.parse(now) + (i * 173 + a * 1_000_003) % (3 * 3_600_000)).toISOString()
      out.push(['delivery_attempts', { delivery_id: del, attempt: a, tenant_id: T, at, trigger: 'auto', response_code: CODES[(i + a) % CODES.length], duration_ms: (i * a) % 7 }])
    }
  }
  return out
}

function expected(): Map<string, [number, number]> {
  const webhookOf = new Map(rows().filter(([t]) => t === 'deliveries').map(([, r]) => [r.id, r.webhook_id]))
  const sums = new Map<string, [number, number]>()
  for (const [t, r] of rows()) {
    if (t !== 'delivery_attempts') continue
    const key = [T, String(r.at).slice(0, 13), webhookOf.get(r.delivery_id), r.duration_ms].join(' ')
    const s = sums.get(key) ?? [0, 0]
    const code = r.response_code as number | null
    sums.set(key, [s[0] + 1, s[1] + (code !== null && code >= 200 && code <= 299 ? 1 : 0)])
  }
  return sums
}

const asMap = (r: { tenant_id: string; hour: string; webhook_id: string; duration_ms: number; n: number; ok: number }[]) =>
  new Map(r.map((x) => [[x.tenant_id, x.hour, x.webhook_id, x.duration_ms].join(' '), [Number(x.n), Number(x.ok)]]))

test('0013 on SQLite sums the attempts already there', () => {
  const dir = mkdtempSync(join(tmpdir(), 'travelops-0013-'))
  try {
    const db = openSqlite(join(dir, 'b.db'))
    const files = loadMigrationFiles()
    migrate(db, files.filter((f) => f.name < '0013'))
    for (const [t, r] of rows()) db.prepare(`INSERT INTO ${t} (${Object.keys(r).join(', ')}) VALUES (${Object.keys(r).map(() => '?').join(', ')})`).run(...Object.values(r))
    assert.deepEqual(migrate(db, files.filter((f) => f.name < '0014')), ['0013_attempt_rollup.sql'])
    assert.deepEqual(asMap(db.prepare('SELECT * FROM attempt_stats').all() as never), expected())
    assert.ok(migrate(db, files).length > 0) // the later ones, on the same rows
    db.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('0013 on PostgreSQL sums the attempts already there', async () => {
  const url = await newPgDatabase()
  const { db } = openPostgres(url)
  try {
    const files = loadMigrationFiles('postgres')
    await migratePostgres(db, files.filter((f) => f.name < '0013'))
    for (const [t, r] of rows()) await db.insertInto(t as never).values(r as never).execute()
    assert.deepEqual(await migratePostgres(db, files.filter((f) => f.name < '0014')), ['0013_attempt_rollup.sql'])
    assert.ok((await migratePostgres(db, files)).length > 0) // the later ones, on the same rows
  } finally {
    await db.destroy()
  }
  assert.deepEqual(asMap(await queryRows(url, 'SELECT * FROM attempt_stats')), expected())
})
