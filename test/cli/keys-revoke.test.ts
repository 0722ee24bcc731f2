import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { migratedDb, runCli, runJson } from '../helpers/cli.ts'
import { runInPty } from '../helpers/pty.ts'

// `keys revoke` is destructive (the key stops working at once): it asks on a terminal, needs
// --yes without one, and --dry-run only says what it would do (AGENTS.md, as `deliveries replay`).

describe('keys revoke asks first', () => {
  let dir: string
  let db: string
  let tenantId: string
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-keys-revoke-'))
    db = await migratedDb(join(dir, 'travelops.db'))
    tenantId = (await runJson(['tenants', 'create', '--name', 'Revokers', '--db', db])).id
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  const newKey = async () => (await runJson(['keys', 'create', '--tenant', tenantId, '--name', 'website', '--db', db])).id as string
  const state = async (id: string) => (await runJson(['keys', 'list', '--tenant', tenantId, '--db', db]) as { id: string; revoked_at: string | null }[]).find((k) => k.id === id)!.revoked_at

  test('without a terminal and without --yes: exit 2, the key still works; --dry-run changes nothing', async () => {
    const id = await newKey()
    const refused = await runCli(['keys', 'revoke', id, '--db', db, '--json'])
    assert.equal(refused.code, 2, refused.stderr)
    assert.equal(refused.stdout, '')
    assert.match(refused.stderr, /no terminal to confirm on: pass --yes/)
    const dry = await runJson(['keys', 'revoke', id.slice(0, 16), '--db', db, '--dry-run'])
    assert.deepEqual({ revoked: dry.revoked, would_revoke: dry.would_revoke, id: dry.key.id }, { revoked: 0, would_revoke: 1, id })
    assert.match((await runCli(['keys', 'revoke', id, '--db', db, '--dry-run'])).stdout, /^would revoke key key_\S+ \(website\) of tenant ten_\S+ \(dry run: nothing was changed\)\n$/)
    assert.equal(await state(id), null)
    const done = await runJson(['keys', 'revoke', id, '--db', db, '--yes'])
    assert.equal(done.revoked, 1)
    assert.ok(done.key.revoked_at)
    assert.ok(await state(id))
    // Already revoked: nothing to ask.
    assert.equal((await runCli(['keys', 'revoke', id, '--db', db])).code, 0)
  })

  test('on a terminal it asks: "n" keeps the key, "y" revokes it', async () => {
    const id = await newKey()
    const declined = await runInPty(['keys', 'revoke', id, '--db', db], { waitFor: '[y/N]', answer: 'n' })
    assert.equal(declined.code, 1, declined.output)
    assert.match(declined.output, new RegExp(`revoke key ${id} \\(website\\) of tenant ${tenantId}\\? It stops working at once\\. \\[y/N\\] n\n`))
    assert.match(declined.output, /cancelled; the key was not revoked/)
    assert.equal(await state(id), null)
    const accepted = await runInPty(['keys', 'revoke', id, '--db', db], { waitFor: '[y/N]', answer: 'y' })
    assert.equal(accepted.code, 0, accepted.output)
    assert.match(accepted.output, new RegExp(`revoked key ${id} at `))
    assert.ok(await state(id))
  })
})
