import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { OpenSqliteDb } from '../../src/engine/port.ts'
import { openDb } from '../../src/engine/sqlite/open.ts'
import { openSqlite, type SqliteDatabase } from '../../src/engine/sqlite/sqlite.ts'
import { createKey } from '../../src/modules/keys/service.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'

/**
 * The key cache's yardstick (src/auth.ts): it must move whenever a key may have changed —
 * any write to api_keys on this connection (rolled back or not), any commit by another
 * connection — and must stay put for this connection's other writes (orders, deliveries), so
 * a server under write load keeps its key rows cached.
 */
let dir: string
let o: OpenSqliteDb
let other: SqliteDatabase
let keyId: string
let tenantId: string
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'travelops-keysversion-'))
  o = openDb(join(dir, 'k.db'))
  other = openSqlite(join(dir, 'k.db'))
  const t = await createTenant(o.db, 'K', new Date())
  tenantId = t.id
  keyId = (await createKey(o.engine, { tenantId, scopes: ['*'] }, new Date())).id
})
after(async () => {
  other.close()
  await o.close()
  rmSync(dir, { recursive: true, force: true })
})

test('this connection\'s writes to other tables, and touching last_used_at, leave it as it was', () => {
  const v = o.engine.keysVersion()
  assert.ok(v)
  o.sqlite.prepare("INSERT INTO tenants (id, name, created_at) VALUES ('ten_other', 'other', '2026-01-01T00:00:00Z')").run()
  o.sqlite.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?').run(new Date().toISOString(), keyId)
  assert.equal(o.engine.keysVersion(), v)
})

for (const [what, write] of [
  ['revoking a key', () => o.sqlite.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?').run(new Date().toISOString(), keyId)],
  ['changing its scopes', () => o.sqlite.prepare("UPDATE api_keys SET scopes = '[]' WHERE id = ?").run(keyId)],
  ['changing its expiry', () => o.sqlite.prepare('UPDATE api_keys SET expires_at = ? WHERE id = ?').run('2026-01-01T00:00:00Z', keyId)],
  ['adding a key', () => o.sqlite.prepare("INSERT INTO api_keys (id, tenant_id, key_hash, key_prefix, scopes, created_at) VALUES ('key_x', ?, 'h', 'p', '[]', '2026-01-01')").run(tenantId)],
  ['deleting a key', () => o.sqlite.prepare("DELETE FROM api_keys WHERE id = 'key_x'").run()],
  ['a key write rolled back', () => o.sqlite.transaction(() => {
    o.sqlite.prepare('UPDATE api_keys SET rate_limit = 5 WHERE id = ?').run(keyId)
    throw new Error('rolled back')
  })()],
  ['another connection committing anything', () => other.prepare("INSERT INTO tenants (id, name, created_at) VALUES ('ten_cli', 'cli', '2026-01-01T00:00:00Z')").run()],
] as const) {
  test(`${what} moves it`, () => {
    const v = o.engine.keysVersion()
    try {
      write()
    } catch { /* the rolled-back case */ }
    assert.notEqual(o.engine.keysVersion(), v)
  })
}
