import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { SseParser } from '../../src/lib/sse.ts'
import { orderBody } from '../helpers/app.ts'
import { apiClient, migratedDb, runJson, startServe, until, type ServeProcess } from '../helpers/cli.ts'
import { openStream } from '../helpers/sse-client.ts'

// CONTRACT §15, GET /v1/events/stream against the real `serve` process: SIGTERM ends a stream
// cleanly, a stream resumes across a restart, and a consumer that reads nothing is cut past a
// bounded buffer, then resumes losing nothing.

/** An order whose event is about 30 KB: notes and 50 metadata values at their limits. */
const bigOrder = (i: number) => orderBody({
  notes: 'n'.repeat(5000),
  metadata: Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`k${k}`, `${i}-${'v'.repeat(490)}`])),
})

describe('event streams of a serve process', () => {
  let dir: string
  let db: string
  let key: string
  const serves: ServeProcess[] = []
  const serve = async (...flags: string[]) => {
    const s = await startServe(['--db', db, '--log-level', 'warn', ...flags])
    serves.push(s)
    return s
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-stream-'))
    db = await migratedDb(join(dir, 'travelops.db'))
    const tenant = await runJson(['tenants', 'create', '--name', 'Streams', '--db', db])
    key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--rate-limit', '100000', '--db', db])).key
  })
  after(async () => {
    await Promise.all(serves.map((s) => s.stop().catch(() => {})))
    rmSync(dir, { recursive: true, force: true })
  })

  test('SIGTERM ends an open stream cleanly; after a restart Last-Event-ID resumes with the events made before it, then new ones', async () => {
    const first = await serve()
    const api = apiClient(first.url, key)
    const s = await openStream(first.url, key)
    const o1 = (await api('POST', '/v1/orders', orderBody())).body.data.id
    const seen = await s.next()
    assert.equal(JSON.parse(seen.data).data.id, o1)
    const missed = [(await api('POST', '/v1/orders', orderBody())).body.data.id, (await api('POST', '/v1/orders', orderBody())).body.data.id]
    assert.equal(await first.stop(), 0)
    assert.equal(await s.ended, 'done', 'the response ended, not cut')

    const second = await serve()
    const resumed = await openStream(second.url, key, { lastEventId: seen.id })
    try {
      assert.deepEqual([JSON.parse((await resumed.next()).data).data.id, JSON.parse((await resumed.next()).data).data.id], missed)
      const o4 = (await apiClient(second.url, key)('POST', '/v1/orders', orderBody())).body.data.id
      assert.equal(JSON.parse((await resumed.next()).data).data.id, o4)
    } finally {
      await resumed.close()
      await second.stop() // one serve per SQLite file: the next test starts its own
    }
  })

  test('a consumer that reads nothing is cut past a bounded buffer, and resuming loses nothing', async () => {
    const s = await serve('--metrics')
    const api = apiClient(s.url, key)
    const { hostname: host, port } = new URL(s.url)
    const metric = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${s.url}/metrics`)).text())?.[1])
    // A consumer that sends its request and never reads: the sockets' buffers fill, then serve's.
    const socket = connect({ host, port: Number(port) })
    socket.pause()
    socket.write(`GET /v1/events/stream HTTP/1.1\r\nHost: ${host}:${port}\r\nAuthorization: Bearer ${key}\r\nAccept: text/event-stream\r\n\r\n`)
    await until('the stream open', async () => await metric('travelops_event_streams') === 1)
    // Orders of ~30 KB, 20 at a time (the events of a batch commit in any order: compared as sets
    // below), until serve counts the stream cut. What serve may hold for a stream is its 1 MiB
    // buffer (test/unit/event-streams.test.ts); beyond it the kernel's socket buffers (a few MB on
    // loopback for a reader that never reads). A stream still open after 800 events (~24 MB) is one
    // serve holds without bound: serve's memory would grow with every event.
    const made: string[] = []
    let cut = 0
    for (let i = 0; i < 800 && cut === 0; i += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, (_, k) => api('POST', '/v1/orders', bigOrder(i + k))))
      made.push(...batch.map((r) => r.body.data.id as string))
      cut = await metric('travelops_event_streams_cut_total')
    }
    assert.equal(cut, 1, `the stream was still open after ${made.length} events of ~30 KB`)
    process.stdout.write(`# stream cut after ${made.length} events of ~30 KB were made\n`)
    await until('the stream cut closed', async () => await metric('travelops_event_streams') === 0)
    // One batch more after the cut: the resumed stream must bring it too.
    const more = await Promise.all(Array.from({ length: 20 }, (_, k) => api('POST', '/v1/orders', bigOrder(10_000 + k))))
    made.push(...more.map((r) => r.body.data.id as string))

    // What the consumer got before the cut, read now: whole messages, then the end of the connection.
    const parser = new SseParser()
    const got: string[] = []
    await new Promise<void>((resolve) => {
      socket.on('data', (d: Buffer) => { for (const m of parser.push(d)) got.push(JSON.parse(m.data).data.id as string) })
      socket.on('close', () => resolve())
      socket.resume()
    })
    assert.ok(got.length > 0 && got.length < made.length, `${got.length} of ${made.length} read before the cut`)

    const resumed = await openStream(s.url, key, { lastEventId: parser.lastEventId })
    try {
      const rest: string[] = []
      while (rest.length < made.length - got.length) rest.push(JSON.parse((await resumed.next()).data).data.id as string)
      assert.deepEqual([...got, ...rest].sort(), [...made].sort(), 'nothing lost, nothing twice')
    } finally {
      await resumed.close()
    }
  })
})
