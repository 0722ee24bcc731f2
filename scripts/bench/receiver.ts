// The webhook receiver: answers 200 with an empty body to every POST. In latency mode it
// records, per request, arrival time minus the event's X-Webhook-Timestamp (both wall clock).
// While held it answers nothing (the worker's slots fill up and it stops sending) until released.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { on, send } from './child.ts'

let count = 0
let latencies: number[] | null = null
let held: (() => void)[] | null = null

const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  req.on('data', () => {})
  req.on('end', () => {
    count++
    if (latencies) {
      const stamp = req.headers['x-webhook-timestamp']
      if (typeof stamp === 'string') latencies.push(Date.now() - Date.parse(stamp))
    }
    const answer = () => {
      res.writeHead(200, { 'content-length': '0' })
      res.end()
    }
    if (held) held.push(answer)
    else answer()
  })
})
on('hold', () => {
  held ??= []
  return {}
})
on('release', () => {
  const waiting = held ?? []
  held = null
  for (const answer of waiting) answer()
  return { released: waiting.length }
})
on('count', () => ({ count }))
on('latency-start', () => {
  latencies = []
  return {}
})
on('latency-peek', () => ({ samples: latencies ?? [] }))
on('latency-stop', () => {
  const samples = latencies ?? []
  latencies = null
  return { samples }
})
server.listen(0, '127.0.0.1', () => {
  send({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
})
