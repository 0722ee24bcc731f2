import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type OpenDb } from '../../src/engine/port.ts'
import { openDatabase } from '../../src/engine/open.ts'
import { withTx } from '../../src/engine/tx.ts'
import { newId } from '../../src/lib/ids.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { newPgDatabase, queryRows } from '../helpers/engine.ts'

// Writes run SERIALIZABLE on PostgreSQL (src/db/tx.ts): a transaction PostgreSQL cannot order
// against the others fails at commit and runs again from the start. Transactions that each
// write an event of their own and its deliveries touch no common row, so they must commit side
// by side at the first attempt. (The deliveries' foreign key to `events` made every two of them
// a read/write cycle: its check read the page of events' primary key that the other inserted
// into, and one in nine of the benchmark's POSTs failed at commit and ran again.)
/** A promise and the function that fulfils it. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

describe('concurrent event writes on PostgreSQL', () => {
  let url: string
  let o: OpenDb
  let tenantId: string
  let webhookIds: string[]

  before(async () => {
    url = await newPgDatabase()
    o = await openDatabase(url, { create: true, migrate: true })
    tenantId = (await createTenant(o.db, 'Side by side', new Date())).id
    const now = new Date().toISOString()
    webhookIds = [newId('wh'), newId('wh')]
    for (const [i, id] of webhookIds.entries()) {
      await o.db.insertInto('webhooks').values({
        id, tenant_id: tenantId, url: `http://127.0.0.1:9/hook/${i}`, events: JSON.stringify(i === 0 ? ['order.created'] : ['*']),
        secret: `whsec_side_${i}_0123456789abcdef`, headers: '{}', active: 1, retry_count: 3, created_at: now, updated_at: now,
      } as never).execute()
    }
  })
  after(async () => {
    await o?.close()
  })

  test('transactions that each write an event and its deliveries all commit at their first attempt', async () => {
    // Written one after another, committed in the opposite order: each of them read (the
    // foreign key's check) before the next one wrote, and the later one commits first — what
    // PostgreSQL aborts when the reads and writes touch the same rows or index pages.
    const n = 4
    const attempts = Array.from({ length: n }, () => 0)
    const wrote = Array.from({ length: n }, () => signal())
    const committed = Array.from({ length: n }, () => signal())
    const eventIds = Array.from({ length: n }, () => newId('evt'))
    const webhooks = await Promise.all(eventIds.map((id, i) => withTx(o.engine, async ({ tx }) => {
      const first = ++attempts[i]! === 1
      if (first && i > 0) await wrote[i - 1]!.promise
      let targets: string[]
      try {
        targets = (await o.engine.writeEvent(tx, { id, tenantId, name: 'order.created', at: new Date().toISOString(), payload: JSON.stringify({ id, event: 'order.created' }) })).webhookIds
      } finally {
        if (first) wrote[i]!.resolve()
      }
      if (first && i < n - 1) await committed[i + 1]!.promise
      return targets
    }).finally(() => committed[i]!.resolve())))
    assert.deepEqual(attempts, Array.from({ length: n }, () => 1), 'no transaction failed serialization and ran again')
    for (const h of webhooks) assert.deepEqual([...h].sort(), [...webhookIds].sort())
    const rows = await queryRows<{ event_id: string; n: number }>(url, 'select event_id, count(*)::int as n from deliveries group by event_id order by event_id')
    assert.deepEqual(rows, [...eventIds].sort().map((event_id) => ({ event_id, n: 2 })))
  })
})
