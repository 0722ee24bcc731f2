import { sql, type Kysely } from 'kysely'
import { openSqlite } from '../../src/engine/sqlite/sqlite.ts'
import type { TestApp } from './app.ts'

export interface StatementSizes {
  /** The rows each statement took away from the count, in order; the watch ends. */
  stop(): Promise<number[]>
}

/**
 * How many rows each statement of a serve under test (in-process) changes, watched the engine's
 * own way, for the tests of work done in bounded statements so that other requests run between
 * two:
 * - SQLite: a connection of the test's reads `count` (one number, which the statements lower)
 *   at every turn of the event loop. A statement runs whole within a turn, so each decrease seen
 *   is one statement — or several that ran in one turn, which is what such a test must catch.
 * - PostgreSQL: a statement-level trigger `AFTER <event> ON <table>` logs `pgCount`, a query over
 *   the statement's transition tables `old_rows` (and `new_rows` for an UPDATE); statements that
 *   change nothing counted are not logged.
 * `onFirst`, a statement run once right after the first one (SQLite: by the test's connection
 * at the next turn; PostgreSQL: by the trigger, in the first statement's transaction).
 */
export async function statementSizes(app: TestApp, o: {
  count: string
  table: string
  event: 'UPDATE' | 'DELETE'
  pgCount: string
  onFirst?: string
}): Promise<StatementSizes> {
  const db = app.server.deps.db as unknown as Kysely<any>
  if (app.server.deps.engine.name === 'postgres') {
    const tag = `test_sizes_${Math.random().toString(36).slice(2, 10)}`
    const transitions = o.event === 'UPDATE' ? 'OLD TABLE AS old_rows NEW TABLE AS new_rows' : 'OLD TABLE AS old_rows'
    await sql.raw(`CREATE TABLE ${tag} (at serial, n int);
      CREATE FUNCTION ${tag}() RETURNS trigger LANGUAGE plpgsql AS $$ DECLARE n int; BEGIN
        n := (${o.pgCount});
        IF n > 0 THEN
          INSERT INTO ${tag} (n) VALUES (n);
          ${o.onFirst ? `IF (SELECT count(*) FROM ${tag}) = 1 THEN ${o.onFirst}; END IF;` : ''}
        END IF;
        RETURN NULL; END $$;
      CREATE TRIGGER ${tag} AFTER ${o.event} ON ${o.table} REFERENCING ${transitions} FOR EACH STATEMENT EXECUTE FUNCTION ${tag}();`).execute(db)
    return {
      async stop() {
        const rows = (await sql.raw<{ n: number }>(`SELECT n FROM ${tag} ORDER BY at`).execute(db)).rows.map((r) => Number(r.n))
        await sql.raw(`DROP TRIGGER ${tag} ON ${o.table}; DROP FUNCTION ${tag}(); DROP TABLE ${tag};`).execute(db)
        return rows
      },
    }
  }
  const reader = openSqlite(app.dbFile)
  reader.pragma('busy_timeout = 0')
  const count = reader.prepare(o.count).pluck()
  const seen: number[] = [count.get() as number]
  let stopped = false
  let first = o.onFirst
  const look = () => {
    const n = count.get() as number
    if (n !== seen[seen.length - 1]) seen.push(n)
  }
  const tick = () => {
    if (stopped) return
    look()
    if (first && seen.length > 1) {
      try {
        reader.exec(first)
        first = undefined
      } catch { /* serve is writing: at the next turn */ }
    }
    setImmediate(tick)
  }
  setImmediate(tick)
  return {
    async stop() {
      stopped = true
      look()
      reader.close()
      return seen.slice(1).map((n, i) => seen[i]! - n)
    },
  }
}
