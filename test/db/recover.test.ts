import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { openDatabase } from '../../src/engine/open.ts'
import { SQLITE_RECOVER, sqliteDeliveryStore } from '../../src/engine/sqlite/delivery-store.ts'
import { openSqlite } from '../../src/engine/sqlite/sqlite.ts'

// serve's start on SQLite frees every lease at once (one serve per file: any lease it finds is a
// previous process's, whose attempts were cut short), so those deliveries are attempted again
// at once. That statement ran before serve listened and read every delivery kept (130–150 ms at
// 2 M, the file cached): it now reads only the leased ones, through a partial index (migration 0016).

describe('serve\'s start frees the previous process\'s leases (SQLite)', () => {
  let dir: string
  before(() => { dir = mkdtempSync(join(tmpdir(), 'travelops-recover-')) })
  after(() => rmSync(dir, { recursive: true, force: true }))

  test('every lease is freed, due or not; nothing else changes; the statement reads the leased deliveries by their index, not the table', async () => {
    const file = join(dir, 'travelops.db')
    const opened = await openDatabase(file, { create: true, migrate: true })
    const raw = openSqlite(file)
    try {
      raw.pragma('foreign_keys = OFF')
      const now = Date.now()
      const at = (s: number) => new Date(now + s * 1000).toISOString()
      // 3,000 deliveries: every 500th leased by a process that is gone (its lease still running), one
      // of them no longer due (its queue dropped meanwhile); every 7th queued, the rest finished.
      raw.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
        INSERT INTO deliveries (id, tenant_id, webhook_id, event_id, event, status, attempts, retries, manual, created_at, due_at, locked_until, locked_by)
        SELECT 'del_00000000-0000-7000-8000-' || printf('%012x', i), 'ten_x', 'wh_' || (i % 3), 'evt_' || i, 'order.created',
          CASE WHEN i % 7 = 0 OR i % 500 = 0 THEN 'pending' ELSE 'delivered' END, 0, 0, 0, ?,
          CASE WHEN i = 1500 THEN NULL WHEN i % 7 = 0 OR i % 500 = 0 THEN ? END,
          CASE WHEN i % 500 = 0 THEN ? END, CASE WHEN i % 500 = 0 THEN 'gone-process' END FROM n`).run(at(-60), at(-30), at(90))
      const rows = () => raw.prepare('SELECT id, status, due_at, locked_until, locked_by FROM deliveries ORDER BY id').all() as { id: string; status: string; due_at: string | null; locked_until: string | null; locked_by: string | null }[]
      const before = rows()
      assert.equal(before.filter((r) => r.locked_until !== null).length, 6)

      await sqliteDeliveryStore(opened.db).recover('new-process')

      const after = rows()
      assert.deepEqual(after.filter((r) => r.locked_until !== null || r.locked_by !== null), [])
      assert.deepEqual(after, before.map((r) => ({ ...r, locked_until: null, locked_by: null })))
      const plan = (raw.prepare(`EXPLAIN QUERY PLAN ${SQLITE_RECOVER}`).all() as { detail: string }[]).map((p) => p.detail)
      assert.ok(plan.some((d) => d.includes('deliveries_leased')) && !plan.some((d) => /^SCAN deliveries$/.test(d)), plan.join('; '))
    } finally {
      raw.close()
      await opened.close()
    }
  })
})
