import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { type OpenDb } from '../../src/engine/port.ts'
import { openDatabase } from '../../src/engine/open.ts'
import '../../src/routes.ts'
import { newPgDatabase } from '../helpers/engine.ts'
import { listIndexesHold, type IndexInfo } from '../helpers/list-indexes.ts'

let opened: OpenDb
before(async () => { opened = await openDatabase(await newPgDatabase(), { create: true, migrate: true }) })
after(() => opened?.close())

test('every list index a table declares exists in the PostgreSQL schema', async () => {
  const { rows } = await sql<{ t: string; cols: string[]; u: boolean }>`
    select t.relname as t, array_agg(a.attname::text order by k.ord) as cols, ix.indisunique as u
    from pg_index ix join pg_class t on t.oid = ix.indrelid join pg_namespace n on n.oid = t.relnamespace
      cross join lateral unnest(ix.indkey) with ordinality as k(attnum, ord)
      join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum
    where n.nspname = current_schema() group by t.relname, ix.indexrelid, ix.indisunique`.execute(opened.db)
  listIndexesHold(rows.map((r): IndexInfo => ({ table: r.t, columns: r.cols, unique: r.u })))
})
