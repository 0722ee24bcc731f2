import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test, type TestContext } from 'node:test'
import type { OpenDb } from '../../src/engine/port.ts'
import { openDatabase } from '../../src/engine/open.ts'
import type { Engine } from '../../src/engine/port.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { newPgDatabase } from '../helpers/engine.ts'
import { startPgServer, type PgServer } from '../helpers/pg-server.ts'

// The conformance suite of the engine port (src/engine/port.ts): each file describes members of
// the port once and runs over both adapters, the way Kysely's suite loops over its dialects;
// each test's name starts with its engine (`[sqlite] …`, `[postgres] …`). PostgreSQL is
// TRAVELOPS_TEST_PG_URL's server (npm test starts one); without one the `[postgres]` tests say
// `left out: …`, and with TRAVELOPS_REQUIRE_PG=1 they fail instead (newPgDatabase() throws).

export type EngineName = Engine['name']
export const ENGINE_NAMES: readonly EngineName[] = ['sqlite', 'postgres']

/** One engine under test: a fresh, migrated database of its own with one tenant. */
export interface Env {
  name: EngineName
  /** `--db` of the database. */
  target: string
  opened: OpenDb
  engine: Engine
  tenantId: string
  /** The same database opened again: another connection or pool, as another process would see it. Closed with the rest. */
  another(): Promise<OpenDb>
  /** A new, empty database of the same engine (not migrated): its `--db`. Removed with the rest. */
  fresh(): Promise<string>
}

export interface EngineSuite {
  name: EngineName
  /** A test of this engine, named `[engine] title`; left out (with a diagnostic) where the engine has no server. */
  test(title: string, fn: (env: Env, t: TestContext) => Promise<void>): void
}

/**
 * `describe('[engine] title')` once per engine, each over a database of its own; `define` adds
 * its tests through the suite it is given. A test that only holds on one engine is defined under
 * `if (s.name === …)`, and its name says what that engine documents.
 *
 * `ownPgServer`: the PostgreSQL database on a server of its own, started for the file. For
 * what depends on every transaction of the cluster, as the event feed does (a write transaction of
 * another file's database holds its events back).
 */
export function eachEngine(title: string, define: (s: EngineSuite) => void, o: { ownPgServer?: boolean } = {}): void {
  for (const name of ENGINE_NAMES) {
    describe(`[${name}] ${title}`, () => {
      let env: Env | undefined
      let server: PgServer | undefined
      const others: OpenDb[] = []
      before(async () => {
        if (name === 'postgres' && o.ownPgServer && _hasPg()) server = await startPgServer()
        const target = await _target(name, server)
        if (!target) return
        const opened = await openDatabase(target, { create: true, migrate: true })
        const tenantId = (await createTenant(opened.db, `Engine ${name}`, new Date())).id
        env = {
          name, target, opened, engine: opened.engine, tenantId,
          another: async () => {
            const o = await openDatabase(target)
            others.push(o)
            return o
          },
          fresh: async () => (await _target(name, server))!,
        }
      })
      after(async () => {
        for (const o of others) await o.close()
        await env?.opened.close()
        await server?.stop()
        for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
      })
      define({
        name,
        test: (t, fn) => test(`[${name}] ${t}`, async (ctx) => {
          if (!env) return ctx.diagnostic('left out: no PostgreSQL server (TRAVELOPS_TEST_PG_URL unset; npm test starts one)')
          await fn(env, ctx)
        }),
      })
    })
  }
}

/** The SQLite files' directories this process made, removed after each describe(). */
const dirs: string[] = []

const _hasPg = () => Boolean(process.env.TRAVELOPS_TEST_PG_URL) || process.env.TRAVELOPS_REQUIRE_PG === '1'

async function _target(name: EngineName, server?: PgServer): Promise<string | undefined> {
  if (name === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'travelops-engine-'))
    dirs.push(dir)
    return join(dir, 'engine.db')
  }
  if (server) return newPgDatabase(server.url)
  return _hasPg() ? newPgDatabase() : undefined
}
