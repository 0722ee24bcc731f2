import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { SseParser } from '../../src/lib/sse.ts'
import { orderBody } from '../helpers/app.ts'
import { apiClient, migratedDb, runJson, startServe, until, type ServeProcess } from '../helpers/cli.ts'
import { testEngine } from '../helpers/engine.ts'
import { openStream } from '../helpers/sse-client.ts'

// CONTRACT §15, GET /v1/events/stream against the real `serve` process: SIGTERM ends a stream
// cleanly, a stream resumes across a restart, and a consumer that reads nothing is cut past a
// bounded buffer without growing serve's memory, then resumes losing nothing.

/** An order whose event is about 30 KB: notes and 50 metadata values at their limits. */
const bigOrder = (i: number) => orderBody({
  notes: 'n'.repeat(5000),
  metadata: Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`k${k}`, `${i}-${'v'.repeat(490)}`])),
})

const peakRss = (pid: number) => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024

/**
 * How far serve's peak RSS may rise while 1,000 events (~30 MB) go to a consumer that reads
 * nothing, after 1,000 of the same with no stream open. Measured: +2.1 to +3.5 MB on SQLite, +13.4
 * to +40.3 MB on PostgreSQL (its driver's buffers); with the stream's buffer unbounded +27.8 and
 * +69.1 MB.
 */
const RSS_BOUND_MB = testEngine() === 'postgres' ? 56 : 16

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

  test('1,000 events while a consumer reads nothing: its stream is cut, serve\'s memory stays bounded, and resuming loses nothing', async () => {
    const s = await serve('--metrics')
    const api = apiClient(s.url, key)
    const { hostname: host, port } = new URL(s.url)
    const metric = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${s.url}/metrics`)).text())?.[1])
    const batch = async (from: number) => (await Promise.all(Array.from({ length: 20 }, (_, k) => api('POST', '/v1/orders', bigOrder(from + k))))).map((r) => r.body.data.id as string)
    // The same load first with no stream open: serve's heap grows to what 30 KB orders need.
    for (let i = 0; i < 1000; i += 20) await batch(100_000 + i)
    // A consumer that sends its request and never reads: the sockets' buffers fill, then serve's.
    const socket = connect({ host, port: Number(port) })
    socket.pause()
    socket.write(`GET /v1/events/stream HTTP/1.1\r\nHost: ${host}:${port}\r\nAuthorization: Bearer ${key}\r\nAccept: text/event-stream\r\n\r\n`)
    await until('the stream open', async () => await metric('travelops_event_streams') === 1)
    const before = peakRss(s.child.pid!)
    // 20 at a time (the events of a batch commit in any order: compared as sets below): ~30 MB of
    // events. What serve may hold for the stream is its 1 MiB buffer (test/unit/event-streams.test.ts);
    // beyond it the kernel's socket buffers hold a few MB.
    const made: string[] = []
    for (let i = 0; i < 1000; i += 20) made.push(...await batch(i))
    const grown = (peakRss(s.child.pid!) - before) / 2 ** 20
    process.stdout.write(`# peak RSS grew ${grown.toFixed(1)} MB over 1,000 events of ~30 KB to a consumer that read nothing\n`)
    assert.equal(await metric('travelops_event_streams_cut_total'), 1, 'the stream was cut')
    await until('the stream cut closed', async () => await metric('travelops_event_streams') === 0)
    assert.ok(grown < RSS_BOUND_MB, `serve's peak RSS grew by ${grown.toFixed(1)} MB (bound ${RSS_BOUND_MB} MB)`)
    // One batch more after the cut: the resumed stream must bring it too.
    made.push(...await batch(10_000))

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
