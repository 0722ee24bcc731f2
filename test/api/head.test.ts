import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp, type TestSession, type TestTenant } from '../helpers/app.ts'

// CONTRACT §16: HEAD on every GET route answers GET's status and headers with no body; GET /
// links the document, the reference page and the dashboard.

/** Headers that differ between any two requests. */
const VARYING = new Set(['x-request-id', 'date', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'keep-alive', 'connection'])

function comparable(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of headers) if (!VARYING.has(name)) out[name] = value
  return out
}

describe('HEAD and GET /', () => {
  let app: TestApp
  let t: TestTenant
  let operator: TestSession
  before(async () => {
    app = await startTestApp({ metrics: true })
    t = await app.tenant()
    operator = await app.session(null)
  })
  after(() => app.close())

  test('every GET route of the registry answers HEAD with its status and headers and no body', async () => {
    // An event stream's GET never ends: its HEAD is tested in test/api/events-stream.test.ts.
    const gets = app.server.routes.filter((r) => r.method === 'GET' && !r.eventStream)
    assert.ok(gets.length > 20, `only ${gets.length} GET routes`)
    for (const route of gets) {
      // A well-formed id that names nothing: the route runs up to its lookup (404).
      const path = route.path.replace(/:(\w+)/g, (_, name: string) => {
        const prefix = route.params?.[name]
        return typeof prefix === 'string' ? `${prefix}_00000000-0000-7000-8000-000000000000` : 'none'
      })
      const as = route.scope === 'session' || route.scope === 'operator' ? operator : t
      const get = await as.request('GET', path)
      const head = await as.request('HEAD', path)
      assert.equal(head.status, get.status, `HEAD ${path}: ${head.status}, GET: ${get.status}`)
      assert.equal(head.text, '', `HEAD ${path} has a body`)
      assert.deepEqual(comparable(head.headers), comparable(get.headers), `HEAD ${path}`)
      if (get.headers.get('content-length') === null) assert.equal(get.headers.get('transfer-encoding'), 'chunked', `GET ${path}`)
      else assert.equal(Number(head.headers.get('content-length')), Buffer.byteLength(get.text), `HEAD ${path}`)
    }
  })

  test('HEAD on /, /health, /metrics, /docs and an unknown path; a 405 names HEAD where GET is allowed', async () => {
    for (const [path, status] of [['/', 200], ['/health', 200], ['/metrics', 200], ['/docs', 200], ['/v1/nothing-here', 404]] as const) {
      const head = await app.request('HEAD', path)
      assert.equal(head.status, status, path)
      assert.equal(head.text, '', path)
      assert.ok(Number(head.headers.get('content-length')) > 0, path)
    }
    const put = await t.request('PUT', '/v1/orders')
    assert.equal(put.status, 405)
    assert.equal(put.headers.get('allow'), 'GET, HEAD, POST')
    const del = await app.request('DELETE', '/')
    assert.equal(del.status, 405)
    assert.equal(del.headers.get('allow'), 'GET, HEAD')
  })

  test('HEAD is counted in the metrics and logged under its own method', async () => {
    await app.request('HEAD', '/health')
    const metrics = (await app.request('GET', '/metrics')).text
    const line = metrics.split('\n').find((l) => l.startsWith('travelops_http_requests_total{') && l.includes('method="HEAD"') && l.includes('route="/health"'))
    assert.ok(line, metrics.split('\n').filter((l) => l.includes('HEAD')).join('\n'))
    assert.match(line, /status="200"/)
  })

  test('GET / links the OpenAPI document, the reference page and the dashboard, each of which answers', async () => {
    const r = await app.request('GET', '/')
    assert.equal(r.status, 200)
    assert.match(r.headers.get('content-type')!, /^application\/json/)
    assert.deepEqual(r.body.links, { openapi: '/v1/openapi.json', docs: '/docs', dashboard: '/dashboard', health: '/health' })
    for (const link of Object.values(r.body.links as Record<string, string>)) assert.equal((await app.request('GET', link)).status, 200, link)
  })

  test('with the dashboard off, GET / does not link it', async () => {
    const off = await startTestApp({ dashboard: false })
    try {
      const r = await off.request('GET', '/')
      assert.equal(r.status, 200)
      assert.deepEqual(r.body.links, { openapi: '/v1/openapi.json', docs: '/docs', health: '/health' })
    } finally {
      await off.close()
    }
  })
})
