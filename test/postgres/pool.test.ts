import assert from 'node:assert/strict'
import { test } from 'node:test'
import { orderBody } from '../helpers/app.ts'
import { apiClient, runJson, startServe } from '../helpers/cli.ts'
import { newPgDatabase } from '../helpers/engine.ts'

// One serve on PostgreSQL with more concurrent creations than its pool has connections (10):
// each creation's transaction holds a connection while its order number is taken by a statement
// that commits on its own. Taken from the same pool, 10 open transactions waited for an 11th
// connection forever (found by npm run bench: 0 POSTs a second).
test('40 concurrent order creations on one process all succeed, with unique numbers', async () => {
  const url = await newPgDatabase()
  await runJson(['migrate', '--db', url])
  const tenant = await runJson(['tenants', 'create', '--name', 'Busy', '--db', url])
  const key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--db', url])).key
  const server = await startServe(['--db', url, '--log-level', 'warn'])
  try {
    const api = apiClient(server.url, key)
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the creations did not finish within 20 s')), 20_000).unref())
    const made = await Promise.race([Promise.all(Array.from({ length: 40 }, () => api('POST', '/v1/orders', orderBody()))), timeout])
    assert.deepEqual(made.map((r) => r.status), Array(40).fill(201))
    assert.equal(new Set(made.map((r) => r.body.data.orderNumber)).size, 40)
  } finally {
    await server.kill()
  }
})
