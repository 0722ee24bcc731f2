// The event-stream figure (CONTRACT §15): `streams` streams of one tenant open on serve's
// GET /v1/events/stream, orders POSTed at a steady rate; for every order and every stream, the
// time from the POST's answer to the event's arrival on that stream (0 when it came first).
import { Agent, request } from 'undici'
import { SseParser } from '../../src/lib/sse.ts'
import { percentile } from './report.ts'

export interface StreamLatency {
  streams: number
  events: number
  samples: number
  p50: number
  p99: number
  max: number
}

export async function measureStreamLatency(o: { serveUrl: string; keys: string[]; streams: number; ratePerS: number; seconds: number; orderBody: string }): Promise<StreamLatency> {
  const agent = new Agent({ connections: o.streams + 8 })
  const arrivals = new Map<string, number[]>()
  const answered = new Map<string, number>()
  const aborts: AbortController[] = []
  const reading: Promise<void>[] = []
  try {
    for (let i = 0; i < o.streams; i++) {
      const ac = new AbortController()
      aborts.push(ac)
      const res = await request(`${o.serveUrl}/v1/events/stream?type=order.created`, {
        dispatcher: agent, headers: { authorization: `Bearer ${o.keys[i % o.keys.length]}` }, signal: ac.signal,
      })
      if (res.statusCode !== 200) throw new Error(`stream ${i}: ${res.statusCode} ${await res.body.text()}`)
      const parser = new SseParser()
      reading.push((async () => {
        try {
          for await (const chunk of res.body) {
            for (const m of parser.push(chunk as Buffer)) {
              const id = _orderId(m.data)
              let list = arrivals.get(id)
              if (!list) arrivals.set(id, (list = []))
              list.push(performance.now())
            }
          }
        } catch { /* aborted at the end */ }
      })())
    }
    const total = Math.round(o.ratePerS * o.seconds)
    const headers = { authorization: `Bearer ${o.keys[0]}`, 'content-type': 'application/json' }
    const t0 = performance.now()
    const sent: Promise<void>[] = []
    for (let i = 0; i < total; i++) {
      const wait = t0 + (i * 1000) / o.ratePerS - performance.now()
      if (wait > 0) await new Promise((r) => setTimeout(r, wait))
      sent.push((async () => {
        const res = await request(`${o.serveUrl}/v1/orders`, { dispatcher: agent, method: 'POST', headers, body: o.orderBody })
        const text = await res.body.text()
        if (res.statusCode !== 201) throw new Error(`streams run: POST /v1/orders answered ${res.statusCode}`)
        answered.set((JSON.parse(text) as { data: { id: string } }).data.id, performance.now())
      })())
    }
    await Promise.all(sent)
    const deadline = performance.now() + 10_000
    while ([...answered.keys()].some((id) => (arrivals.get(id)?.length ?? 0) < o.streams)) {
      if (performance.now() > deadline) throw new Error('streams run: events missing on some streams after 10 s')
      await new Promise((r) => setTimeout(r, 20))
    }
    const lags: number[] = []
    for (const [id, at] of answered) for (const a of arrivals.get(id)!) lags.push(Math.max(0, a - at))
    lags.sort((a, b) => a - b)
    const round = (x: number) => Math.round(x * 10) / 10
    return { streams: o.streams, events: total, samples: lags.length, p50: round(percentile(lags, 50)), p99: round(percentile(lags, 99)), max: round(lags[lags.length - 1] ?? NaN) }
  } finally {
    for (const ac of aborts) ac.abort()
    await Promise.all(reading)
    await agent.close()
  }
}

/** The order's id in an order.created envelope. */
function _orderId(data: string): string {
  return (JSON.parse(data) as { data: { id: string } }).data.id
}
