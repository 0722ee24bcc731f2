import type { Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { Metrics } from '../context.ts'
import type { Engine } from '../engine/port.ts'
import { existingStreams } from '../events/streams.ts'

/**
 * `--metrics` (CONTRACT §13): Prometheus text at GET /metrics, names starting with
 * `travelops_`. Labels carry route patterns, methods, statuses and outcomes only — never a
 * tenant, a key or a URL. prom-client is loaded only when metrics are on.
 * It builds context.ts's Metrics, the shape the shared deps hold.
 */
export async function createMetrics(engine: Engine, clock: { now(): Date }): Promise<Metrics> {
  const db = engine.db
  const prom = await import('prom-client')
  const registry: Registry = new prom.Registry()
  prom.collectDefaultMetrics({ register: registry, prefix: 'travelops_' })
  const requests: Counter<'method' | 'route' | 'status'> = new prom.Counter({
    name: 'travelops_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'], registers: [registry],
  })
  const requestSeconds: Histogram<'method' | 'route'> = new prom.Histogram({
    name: 'travelops_http_request_duration_seconds', help: 'Time to answer an HTTP request',
    labelNames: ['method', 'route'], buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers: [registry],
  })
  const attempts: Counter<'outcome'> = new prom.Counter({
    name: 'travelops_delivery_attempts_total', help: 'Webhook delivery attempts, by outcome', labelNames: ['outcome'], registers: [registry],
  })
  const attemptSeconds: Histogram<'outcome'> = new prom.Histogram({
    name: 'travelops_delivery_attempt_duration_seconds', help: 'Duration of a webhook delivery attempt', labelNames: ['outcome'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [registry],
  })
  // Read from the database at scrape time: indexed, and right whichever process did the work.
  const queued: Gauge = new prom.Gauge({ name: 'travelops_deliveries_queued', help: 'Deliveries waiting for an attempt (due now or later)', registers: [registry] })
  const oldest: Gauge = new prom.Gauge({ name: 'travelops_oldest_due_delivery_age_seconds', help: 'How long the oldest due delivery has been waiting (0 when none)', registers: [registry] })
  const disabled: Gauge = new prom.Gauge({ name: 'travelops_webhooks_disabled', help: 'Subscriptions disabled by endpoint health (failing or gone)', registers: [registry] })
  // This process's event streams (GET /v1/events/stream): their counts are kept by events/streams.ts.
  const streams: Gauge = new prom.Gauge({ name: 'travelops_event_streams', help: 'Event streams open on this process', registers: [registry] })
  const streamed: Counter = new prom.Counter({ name: 'travelops_event_stream_messages_total', help: 'Events written to event streams by this process', registers: [registry] })
  const cut: Counter = new prom.Counter({ name: 'travelops_event_streams_cut_total', help: 'Event streams this process closed because their consumer read too slowly', registers: [registry] })
  let counted = { sent: 0, cutSlow: 0 }
  return {
    request(method, route, status, seconds) {
      requests.inc({ method, route, status: String(status) })
      requestSeconds.observe({ method, route }, seconds)
    },
    attempt(outcome, seconds) {
      attempts.inc({ outcome })
      attemptSeconds.observe({ outcome }, seconds)
    },
    async render() {
      const now = clock.now().toISOString()
      const q = await engine.countQueued()
      const first = await engine.earliestDue()
      const off = await db.selectFrom('webhooks').select((eb) => eb.fn.countAll<number>().as('n'))
        .where('disabled_at', 'is not', null).where('active', '=', 0).where('deleted_at', 'is', null).executeTakeFirst()
      queued.set(q)
      oldest.set(first !== null && first <= now ? (Date.parse(now) - Date.parse(first)) / 1000 : 0)
      disabled.set(Number(off?.n ?? 0))
      const st = existingStreams(engine)?.stats() ?? { open: 0, sent: 0, cutSlow: 0 }
      streams.set(st.open)
      streamed.inc(Math.max(0, st.sent - counted.sent))
      cut.inc(Math.max(0, st.cutSlow - counted.cutSlow))
      counted = { sent: Math.max(counted.sent, st.sent), cutSlow: Math.max(counted.cutSlow, st.cutSlow) }
      return { body: await registry.metrics(), contentType: registry.contentType }
    },
  }
}
