import assert from 'node:assert/strict'
import { testEngine } from '../helpers/engine.ts'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Agent, request } from 'undici'
import { orderBody } from '../helpers/app.ts'
import { apiClient, runCli, runJson, startServe, until, migratedDb } from '../helpers/cli.ts'
import { startReceiver } from '../helpers/receiver.ts'

/** §13 Serving and observing: strict ports through listhen, HTTPS, /metrics, the start-up line. */
describe('serve: ports, HTTPS, metrics, start-up log', () => {
  let dir: string
  let db: string
  let key: string
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-serving-'))
    db = await migratedDb(join(dir, 's.db'))
    const tenant = await runJson(['tenants', 'create', '--name', 'S', '--db', db])
    key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])).key
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  test('a busy --port exits 1 and says so; it never moves to another port', async () => {
    const busy = createServer()
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()))
    const port = (busy.address() as AddressInfo).port
    try {
      const r = await runCli(['serve', '--db', db, '--port', String(port), '--log-level', 'silent'])
      assert.equal(r.code, 1)
      assert.match(r.stderr, new RegExp(`port ${port} on 127.0.0.1 is in use`))
      assert.equal(r.stdout, '', 'no URL printed')
    } finally {
      busy.close()
    }
  })

  test('HTTPS with --tls-cert/--tls-key: the printed URL says https and the API answers over TLS', async () => {
    const cert = join(dir, 'cert.pem')
    const keyFile = join(dir, 'key.pem')
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', cert, '-days', '1',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' })
    const server = await startServe(['--db', db, '--log-level', 'silent'], { TRAVELOPS_TLS_CERT: cert, TRAVELOPS_TLS_KEY: keyFile })
    const agent = new Agent({ connect: { ca: readFileSync(cert, 'utf8') } })
    try {
      assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/)
      const r = await request(`${server.url}/v1/orders`, { dispatcher: agent, headers: { authorization: `Bearer ${key}` } })
      assert.equal(r.statusCode, 200)
      assert.deepEqual((await r.body.json() as { data: unknown[] }).data, [])
    } finally {
      await agent.close()
      assert.equal(await server.stop(), 0)
    }
    const half = await runCli(['serve', '--db', db, '--tls-cert', cert])
    assert.equal(half.code, 2)
    assert.match(half.stderr, /--tls-cert and --tls-key go together/)
  })

  test('--metrics serves Prometheus text whose counters move with the traffic; no tenant, key or URL in it; off by default', async () => {
    const plain = await startServe(['--db', db, '--log-level', 'info'])
    try {
      assert.equal((await fetch(`${plain.url}/metrics`)).status, 404)
      const started = JSON.parse(plain.stderr().split('\n').find((l) => l.includes('"travelops started"'))!)
      assert.equal(started.level, 'info')
      assert.match(started.version, /^\d+\.\d+\.\d+/)
      assert.equal(started.engine, testEngine())
      assert.equal(started.db, db)
      assert.equal(started.url, plain.url)
    } finally {
      assert.equal(await plain.stop(), 0)
    }
    const rx = await startReceiver()
    const server = await startServe(['--db', db, '--log-level', 'silent', '--allow-private-targets'], { TRAVELOPS_METRICS: '1' })
    try {
      const api = apiClient(server.url, key)
      const scrape = async () => {
        const r = await fetch(`${server.url}/metrics`)
        assert.equal(r.status, 200)
        assert.match(r.headers.get('content-type') ?? '', /^text\/plain/)
        return _parse(await r.text())
      }
      const before = await scrape()
      const webhook = (await api('POST', '/v1/webhooks', { url: rx.url, events: ['order.created'], secret: 'metrics-secret-0123' })).body.data
      for (let i = 0; i < 3; i++) await api('GET', '/v1/orders')
      await api('POST', '/v1/orders', orderBody())
      await rx.waitFor(1)
      const afterwards = await until('the attempt counted', async () => {
        const m = await scrape()
        // Counted when the answer arrives; recorded (and off the queue) a moment later.
        return (m.get('travelops_delivery_attempts_total{outcome="delivered"}') ?? 0) >= 1 && m.get('travelops_deliveries_queued') === 0 && m
      })
      const gets = 'travelops_http_requests_total{method="GET",route="/v1/orders",status="200"}'
      assert.equal((afterwards.get(gets) ?? 0) - (before.get(gets) ?? 0), 3)
      assert.equal(afterwards.get('travelops_http_requests_total{method="POST",route="/v1/orders",status="201"}'), 1)
      assert.ok((afterwards.get('travelops_delivery_attempt_duration_seconds_count{outcome="delivered"}') ?? 0) >= 1)
      assert.equal(afterwards.get('travelops_deliveries_queued'), 0)
      assert.equal(afterwards.get('travelops_webhooks_disabled'), 0)
      assert.ok(afterwards.has('travelops_process_resident_memory_bytes'))
      for (const name of afterwards.keys()) assert.match(name, /^travelops_/)
      const text = await (await fetch(`${server.url}/metrics`)).text()
      for (const secret of [key, webhook.id, rx.url, 'ten_', 'metrics-secret']) assert.ok(!text.includes(secret), secret)
    } finally {
      assert.equal(await server.stop(), 0)
      await rx.close()
    }
  })
})

/** Prometheus text exposition → series → value; throws on a line that is not a comment or a sample. */
function _parse(text: string): Map<string, number> {
  const series = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})?) (-?[0-9.eE+-]+|NaN|Nan|\+Inf|-Inf)$/.exec(line)
    assert.ok(m, `not Prometheus text: ${line}`)
    series.set(m[1]!, Number(m[2]))
  }
  return series
}
