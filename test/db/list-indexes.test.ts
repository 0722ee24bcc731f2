import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { openDb } from '../../src/engine/sqlite/open.ts'
import { LIST_INDEXES } from '../../src/db/tenant-table.ts'
import '../../src/routes.ts'
import { listIndexesHold, type IndexInfo } from '../helpers/list-indexes.ts'

const dir = mkdtempSync(join(tmpdir(), 'travelops-list-indexes-'))
after(() => rmSync(dir, { recursive: true, force: true }))

test('every list index a table declares exists in the SQLite schema (a list trusted to one index range must have it)', () => {
  const o = openDb(join(dir, 'db.sqlite'))
  try {
    const indexes: IndexInfo[] = []
    for (const table of LIST_INDEXES.keys()) {
      for (const ix of o.sqlite.prepare(`PRAGMA index_list(${table})`).all() as { name: string; unique: number }[]) {
        const cols = (o.sqlite.prepare(`PRAGMA index_info(${ix.name})`).all() as { name: string }[]).map((c) => c.name)
        indexes.push({ table, columns: cols, unique: ix.unique === 1 })
      }
    }
    listIndexesHold(indexes)
    assert.ok(LIST_INDEXES.size >= 12, `${LIST_INDEXES.size} tables`)
  } finally {
    o.sqlite.close()
  }
})
