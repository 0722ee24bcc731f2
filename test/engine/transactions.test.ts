import assert from 'node:assert/strict'
import { sql } from 'kysely'
import type { Db } from '../../src/db/connect.ts'
import { eachEngine, type Env } from './each-engine.ts'

// The port's transactions (Engine.withTx(), nextCounter(), conflictOf(), rerunOnConflict()) as a
// contract, on a real database of each engine. SQLite runs them one writer at a time, grouped
// per event-loop turn (engine/sqlite/group-commit.ts); PostgreSQL runs each SERIALIZABLE and
// again when it loses (engine/postgres/transactions.ts); what a caller may count on is the same.

const tenantName = async (db: Db, id: string) => (await db.selectFrom('tenants').select('name').where('id', '=', id).executeTakeFirstOrThrow()).name
const newTenantId = () => `ten_engine_${crypto.randomUUID().replaceAll('-', '')}`
const insertTenant = (db: Db, id: string, name: string) => db.insertInto('tenants').values({ id, name, created_at: new Date().toISOString() }).execute()
const exists = async (env: Env, id: string) => {
  // Read through another connection: what is committed, not what this one holds.
  const other = await env.another()
  return (await other.db.selectFrom('tenants').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
}

eachEngine('Engine.withTx()', (s) => {
  s.test('commits what fn wrote, answers what fn returned, and runs afterCommit hooks once, after the commit', async (env) => {
    const id = newTenantId()
    const seen: string[] = []
    const answer = await env.engine.withTx(async ({ tx, afterCommit }) => {
      await insertTenant(tx, id, 'committed')
      afterCommit(() => seen.push('hook'))
      seen.push('fn')
      return 42
    })
    assert.equal(answer, 42)
    assert.deepEqual(seen, ['fn', 'hook'])
    assert.equal(await exists(env, id), true)
  })

  s.test('rolls back everything fn wrote when it throws, rethrows its error, and runs no hook', async (env) => {
    const id = newTenantId()
    const boom = new Error('boom')
    let hooks = 0
    await assert.rejects(env.engine.withTx(async ({ tx, afterCommit }) => {
      await insertTenant(tx, id, 'rolled back')
      afterCommit(() => hooks++)
      throw boom
    }), (err) => err === boom)
    assert.equal(hooks, 0)
    assert.equal(await exists(env, id), false)
  })

  s.test('transactions started together (one group commit on SQLite) settle each on its own: the one that throws is rolled back alone', async (env) => {
    const ids = [newTenantId(), newTenantId(), newTenantId()]
    const hooks: string[] = []
    const settled = await Promise.allSettled(ids.map((id, i) => env.engine.withTx(async ({ tx, afterCommit }) => {
      await insertTenant(tx, id, `member ${i}`)
      afterCommit(() => hooks.push(id))
      if (i === 1) throw new Error(`member ${i} fails`)
      return i
    })))
    assert.deepEqual(settled.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled'])
    assert.deepEqual(settled.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)), [0, 'member 1 fails', 2])
    assert.deepEqual(await Promise.all(ids.map((id) => exists(env, id))), [true, false, true])
    assert.deepEqual(hooks.sort(), [ids[0], ids[2]].sort())
  })

  s.test('concurrent read-then-write transactions lose no update: each sees the commits before it', async (env) => {
    const id = newTenantId()
    await insertTenant(env.opened.db, id, '')
    const n = 8
    await Promise.all(Array.from({ length: n }, (_, i) => env.engine.withTx(async ({ tx }) => {
      const name = await tenantName(tx, id)
      await tx.updateTable('tenants').set({ name: `${name}${i}` }).where('id', '=', id).execute()
    })))
    const name = await tenantName(env.opened.db, id)
    assert.equal(name.length, n, name)
    assert.deepEqual([...name].sort(), Array.from({ length: n }, (_, i) => String(i)))
  })
})

eachEngine('Engine.nextCounter()', (s) => {
  s.test('counts from 1, per tenant and per name, in the caller\'s transaction', async (env) => {
    const other = newTenantId()
    await insertTenant(env.opened.db, other, 'other')
    const next = (tenant: string, name: string) => env.engine.withTx(({ tx }) => env.engine.nextCounter(tx, tenant, name))
    assert.deepEqual([await next(env.tenantId, 'order'), await next(env.tenantId, 'order'), await next(env.tenantId, 'order')], [1, 2, 3])
    assert.equal(await next(env.tenantId, 'invoice'), 1)
    assert.equal(await next(other, 'order'), 1)
  })

  s.test('transactions taking numbers at once get each a different one, with no number skipped', async (env) => {
    const values = await Promise.all(Array.from({ length: 6 }, () => env.engine.withTx(({ tx }) => env.engine.nextCounter(tx, env.tenantId, 'concurrent'))))
    assert.deepEqual(values.sort((a, b) => a - b), [1, 2, 3, 4, 5, 6])
  })

  const gap = s.name === 'sqlite'
    ? 'a number taken by a transaction that rolls back is taken again (one writer: numbers have no gaps)'
    : 'a number taken by a transaction that rolls back stays used (committed on its own: a gap, never a duplicate)'
  s.test(gap, async (env) => {
    const next = () => env.engine.withTx(({ tx }) => env.engine.nextCounter(tx, env.tenantId, 'gap'))
    assert.equal(await next(), 1)
    await assert.rejects(env.engine.withTx(async ({ tx }) => {
      assert.equal(await env.engine.nextCounter(tx, env.tenantId, 'gap'), 2)
      throw new Error('rolled back')
    }), /rolled back/)
    assert.equal(await next(), s.name === 'sqlite' ? 2 : 3)
  })
})

eachEngine('Engine.conflictOf() and rerunOnConflict()', (s) => {
  s.test('an error that is no race between writers is no conflict', async (env) => {
    const err = await sql`select * from no_such_table`.execute(env.opened.db).then(() => undefined, (e: unknown) => e)
    assert.ok(err instanceof Error)
    assert.equal(env.engine.conflictOf(err), undefined)
  })

  if (s.name === 'sqlite') {
    s.test('a unique key refused is no conflict either: one writer at a time, the services check before they write (409 from their check, not from the error)', async (env) => {
      const id = newTenantId()
      await insertTenant(env.opened.db, id, 'first')
      const err = await insertTenant(env.opened.db, id, 'second').then(() => undefined, (e: unknown) => e)
      assert.ok(err instanceof Error && /UNIQUE/.test(err.message), String(err))
      assert.equal(env.engine.conflictOf(err), undefined)
    })

    s.test('rerunOnConflict() runs its statement once: no race ends it', async (env) => {
      let runs = 0
      await assert.rejects(env.engine.rerunOnConflict(async () => {
        runs++
        await sql`select * from no_such_table`.execute(env.opened.db)
      }), /no_such_table/)
      assert.equal(runs, 1)
      assert.deepEqual(await env.engine.rerunOnConflict(async () => (++runs, 'once')), 'once')
      assert.equal(runs, 2)
    })
  } else {
    // Real errors of the server, with the SQLSTATE a lost race has.
    const raise = (db: Db, code: string) => sql.raw(`DO $$ BEGIN RAISE EXCEPTION 'lost a race' USING ERRCODE = '${code}'; END $$`).execute(db)

    s.test('two writers at the same unique key: the loser\'s error is a `unique` conflict (409)', async (env) => {
      const id = newTenantId()
      const other = await env.another()
      const settled = await Promise.allSettled([insertTenant(env.opened.db, id, 'one'), insertTenant(other.db, id, 'two')])
      const lost = settled.filter((r) => r.status === 'rejected')
      assert.equal(lost.length, 1)
      assert.equal(env.engine.conflictOf(lost[0]!.reason), 'unique')
    })

    s.test('a transaction that keeps losing: withTx() runs it again, then gives up with a `concurrent` conflict (409)', async (env) => {
      let runs = 0
      const err = await env.engine.withTx(async ({ tx }) => {
        runs++
        await raise(tx as unknown as Db, '40001')
      }).then(() => undefined, (e: unknown) => e)
      assert.ok(runs > 1, `${runs} runs`)
      assert.equal(env.engine.conflictOf(err), 'concurrent')
    })

    s.test('rerunOnConflict() runs a deadlock\'s victim again, and any other error not', async (env) => {
      let runs = 0
      assert.equal(await env.engine.rerunOnConflict(async () => {
        if (++runs === 1) await raise(env.opened.db, '40P01')
        return 'ran again'
      }), 'ran again')
      assert.equal(runs, 2)
      runs = 0
      await assert.rejects(env.engine.rerunOnConflict(async () => {
        runs++
        await raise(env.opened.db, '22012')
      }), /lost a race/)
      assert.equal(runs, 1)
    })
  }
})
