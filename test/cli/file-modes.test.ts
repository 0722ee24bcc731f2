import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { BIN, startServe } from '../helpers/cli.ts'

/** Runs the CLI under a permissive umask (022), as a default shell would. */
const cli = (...args: string[]) => execFileSync('/bin/sh', ['-c', 'umask 022; exec "$0" "$@"', process.execPath, BIN, ...args], { encoding: 'utf8' })
const mode = (file: string) => (statSync(file).mode & 0o777).toString(8)

/** §9 Files: the database, its -wal/-shm companions and backups are created owner-only (0600). */
test('database, WAL, shared memory and backup files are created with mode 0600 under umask 022', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'travelops-modes-'))
  try {
    const db = join(dir, 'modes.db')
    cli('migrate', '--db', db)
    assert.equal(mode(db), '600')
    const server = await startServe(['--db', db, '--log-level', 'silent'])
    try {
      for (const f of [`${db}-wal`, `${db}-shm`]) {
        assert.ok(existsSync(f), f)
        assert.equal(mode(f), '600', f)
      }
      const backup = join(dir, 'backup.db')
      cli('backup', backup, '--db', db)
      assert.equal(mode(backup), '600')
    } finally {
      assert.equal(await server.stop(), 0)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
