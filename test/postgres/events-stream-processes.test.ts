import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { orderBody } from '../helpers/app.ts'
import { apiClient, runJson, startServe, type ServeProcess } from '../helpers/cli.ts'
import { newPgDatabase } from '../helpers/engine.ts'
import { startPgServer, type PgServer } from '../helpers/pg-server.ts'
import { openStream, type SseClient } from '../helpers/sse-client.ts'

// CONTRACT §15: a new event reaches every connected stream, on any `serve` process of the
// database, within 1 s of the answer to the request that made it (PostgreSQL: NOTIFY after
// commit, engine/postgres/event-feed.ts). On a PostgreSQL server of its own: the feed waits for
// every write transaction of the cluster, and other files' would hold these events back.

describe('event streams across two serve processes on one PostgreSQL database', () => {
  let servers: ServeProcess[] = []
  let pgServer: PgServer | undefined
  let key: string
  const streams: SseClient[] = []

  before(async () => {
    assert.ok(process.env.TRAVELOPS_TEST_PG_URL, 'needs TRAVELOPS_TEST_PG_URL (npm test starts a server)')
    pgServer = await startPgServer()
    const url = await newPgDatabase(pgServer.url)
    servers = await Promise.all([0, 1].map(() => startServe(['--db', url, '--log-level', 'warn'])))
    const tenant = await runJson(['tenants', 'create', '--name', 'Two', '--db', url])
    key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--rate-limit', '100000', '--db', url])).key
  })
  after(async () => {
    await Promise.all(streams.map((s) => s.close()))
    await Promise.all(servers.map((s) => s.stop().catch(() => {})))
    await pgServer?.stop()
  })

  test('an order made on one process reaches a stream on the other within 1 s of its answer, each of 20 times', async () => {
    const [one, two] = servers as [ServeProcess, ServeProcess]
    const s = await openStream(one.url, key)
    streams.push(s)
    const post = apiClient(two.url, key)
    const lags: number[] = []
    for (let i = 0; i < 20; i++) {
      const r = await post('POST', '/v1/orders', orderBody())
      const answered = performance.now()
      const m = await s.next(5_000)
      lags.push(performance.now() - answered)
      assert.equal(JSON.parse(m.data).data.id, r.body.data.id)
    }
    assert.ok(Math.max(...lags) < 1_000, `lags (ms): ${lags.map((l) => l.toFixed(0)).join(', ')}`)
  })
})
