import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { GCProfiler } from 'node:v8'
import { createSender } from '../../src/delivery/send.ts'

// What the sender's attempts leave for old space: counted, not timed. Young-generation
// collections move to old space what is still alive at two of them in a row; an attempt
// that is over is garbage, so sends that keep nothing alive promote next to nothing.
// undici's request() did not: a closure its handler stores per request kept every request's
// objects (headers, streams, promises) alive past the scavenges, ~3 kB per send, until a full
// collection.

test('a finished attempt leaves nothing behind for old space', async () => {
  // A receiver that keeps nothing either (the test helper's records every request).
  const server: Server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(200, { 'content-length': '0' }).end())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  const sender = createSender({ timeoutMs: 5000, allowPrivate: true, userAgent: 'travelops/test', connectionsPerKey: 16 })
  const body = JSON.stringify({ id: 'evt_1', event: 'order.created', data: { notes: 'x'.repeat(1000) } })
  const headers = { 'Content-Type': 'application/json', 'X-Webhook-ID': 'evt_1', 'X-Webhook-Signature': 'ab12', 'X-Custom': 'yes' }
  const sendAll = async (n: number) => {
    let left = n
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (left-- > 0) assert.equal((await sender.send({ url, body, headers, key: 'wh_memory' })).responseCode, 200)
    }))
  }
  try {
    await sendAll(500) // connections up, code warm
    const profiler = new GCProfiler()
    profiler.start()
    const sends = 4000
    await sendAll(sends)
    let promoted = 0
    let scavenges = 0
    for (const c of profiler.stop()?.statistics ?? []) {
      if (c.gcType !== 'Scavenge') continue
      scavenges++
      const old = (at: typeof c.beforeGC) => at.heapSpaceStatistics.find((s) => s.spaceName === 'old_space')?.spaceUsedSize ?? 0
      promoted += Math.max(0, old(c.afterGC) - old(c.beforeGC))
    }
    assert.ok(scavenges >= 3, `only ${scavenges} scavenges: too few to measure`)
    const perSend = promoted / sends
    assert.ok(perSend < 800, `${Math.round(perSend)} bytes promoted per send (${scavenges} scavenges)`)
  } finally {
    await sender.close()
    await new Promise((resolve) => server.close(resolve))
  }
})
