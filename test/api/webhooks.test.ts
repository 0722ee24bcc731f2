import assert from 'node:assert/strict'
import { scenarios, type Fixture } from '../helpers/scenario.ts'

interface F extends Fixture {
  webhook: string
  foreignWebhook: string
}

const body = (over: Record<string, unknown> = {}) => ({ url: 'https://hooks.example.invalid/in', events: ['order.created'], secret: 's3cret-s3cret-s3cret', ...over })
const firstDetail = (r: { body: { error: { details: { path: string; message: string }[] } } }) => r.body.error.details[0]!

scenarios<F>('webhook subscriptions and deliveries API', async (base) => {
  const webhook = (await base.tenant.request('POST', '/v1/webhooks', { body: body({ headers: { 'X-Token': 'hidden-value' } }) })).body.data.id
  const foreignWebhook = (await base.other.request('POST', '/v1/webhooks', { body: body() })).body.data.id
  return { ...base, webhook, foreignWebhook }
}, [
  { name: 'create', method: 'POST', path: '/v1/webhooks', body: body({ events: ['*'] }), status: 201, check: (r) => {
    const w = r.body.data
    assert.match(w.id, /^wh_[0-9a-f-]{36}$/)
    assert.equal(w.active, true)
    assert.equal(w.retry_count, 3)
    assert.deepEqual(w.events, ['*'])
    assert.equal('secret' in w, false)
    assert.match(w.created_at, /Z$/)
  } },
  { name: 'read never shows the secret or header values', method: 'GET', path: (f) => `/v1/webhooks/${f.webhook}`, status: 200, check: (r) => {
    assert.ok(!r.text.includes('s3cret') && !r.text.includes('hidden-value'))
    assert.deepEqual(r.body.data.header_names, ['X-Token'])
  } },
  { name: 'list', method: 'GET', path: '/v1/webhooks', status: 200, check: (r, f) => {
    const ids = r.body.data.map((w: { id: string }) => w.id)
    assert.ok(ids.includes(f.webhook) && !ids.includes(f.foreignWebhook))
  } },
  { name: 'patch events', method: 'PATCH', path: (f) => `/v1/webhooks/${f.webhook}`, body: { events: ['order.created', 'order.cancelled', 'order.created'] }, status: 200, check: (r) => {
    assert.deepEqual(r.body.data.events, ['order.created', 'order.cancelled'])
  } },
  { name: 'list deliveries with filters', method: 'GET', path: (f) => `/v1/webhooks/deliveries?webhook_id=${f.webhook}&status=failed&event=order.created`, status: 200, check: (r) => assert.deepEqual(r.body.data, []) },
  { name: 'unknown event name', method: 'POST', path: '/v1/webhooks', body: body({ events: ['order.created', 'order.shipped'] }), status: 422, check: (r) => {
    assert.deepEqual(firstDetail(r), { path: 'events[1]', message: "unknown event name 'order.shipped'" })
  } },
  { name: 'empty events', method: 'POST', path: '/v1/webhooks', body: body({ events: [] }), status: 422 },
  { name: '* mixed with names', method: 'POST', path: '/v1/webhooks', body: body({ events: ['*', 'order.created'] }), status: 422 },
  { name: 'short secret', method: 'POST', path: '/v1/webhooks', body: body({ secret: 'short' }), status: 422, check: (r) => assert.equal(firstDetail(r).path, 'secret') },
  { name: 'no secret: one is generated and shown in this answer (§16)', method: 'POST', path: '/v1/webhooks', body: { url: 'https://a.example.invalid', events: ['*'] }, status: 201,
    check: (r) => assert.match(r.body.data.secret, /^whsec_[A-Za-z0-9+/]{43}=$/) },
  { name: 'ftp url', method: 'POST', path: '/v1/webhooks', body: body({ url: 'ftp://files.example.invalid/' }), status: 422, check: (r) => assert.equal(firstDetail(r).path, 'url') },
  { name: 'reserved header', method: 'POST', path: '/v1/webhooks', body: body({ headers: { 'X-Webhook-Signature': 'forged', 'user-agent': 'x' } }), status: 422, check: (r) => {
    assert.deepEqual(r.body.error.details.map((d: { path: string }) => d.path).sort(), ['headers.X-Webhook-Signature', 'headers.user-agent'])
  } },
  { name: 'too many headers', method: 'POST', path: '/v1/webhooks', body: body({ headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])) }), status: 422 },
  { name: 'header value with a line break', method: 'POST', path: '/v1/webhooks', body: body({ headers: { 'X-A': 'a\r\nInjected: 1' } }), status: 422 },
  { name: 'connection-specific header names (any case), Proxy-*, and a name that is not a token: every one listed', method: 'POST', path: '/v1/webhooks',
    body: body({ headers: { Connection: 'close', 'keep-alive': '5', 'Transfer-Encoding': 'chunked', TE: 'trailers', Trailer: 'X', UPGRADE: 'h2c', Expect: '100-continue', 'Proxy-Authorization': 'x', 'Bad Name': 'x', 'X-Ok': 'fine' } }),
    status: 422, check: (r) => {
      assert.deepEqual(r.body.error.details.map((d: { path: string }) => d.path).sort(),
        ['headers.Bad Name', 'headers.Connection', 'headers.Expect', 'headers.Proxy-Authorization', 'headers.TE', 'headers.Trailer', 'headers.Transfer-Encoding', 'headers.UPGRADE', 'headers.keep-alive'])
    } },
  // CONTRACT §16: every name about the connection, the body's framing or the path it came by, one scenario each, any case.
  ...['Host', 'connection', 'Keep-Alive', 'UPGRADE', 'TE', 'Trailer', 'Transfer-Encoding', 'Content-Encoding', 'content-language', 'Content-MD5',
    'Proxy-Authorization', 'Forwarded', 'X-Forwarded-For', 'x-forwarded-proto', 'Cookie'].map((name) => ({
    name: `refused header name: ${name}`, method: 'POST' as const, path: '/v1/webhooks', body: body({ headers: { [name]: 'v', 'X-Ok': 'fine' } }), status: 422,
    check: (r: { body: { error: { details: { path: string; message: string }[] } } }) => {
      assert.deepEqual(r.body.error.details.map((d) => d.path), [`headers.${name}`])
      assert.match(firstDetail(r).message, new RegExp(`^header '${name}' .*cannot be set$`))
    },
  })),
  { name: 'Authorization is allowed and its value never returned', method: 'POST', path: '/v1/webhooks', body: body({ headers: { Authorization: 'Bearer receiver-token-xyz' } }), status: 201,
    check: (r) => {
      assert.ok(!r.text.includes('receiver-token-xyz'))
      assert.deepEqual(r.body.data.header_names, ['Authorization'])
    } },
  { name: 'header values: non-ASCII, control characters, leading or trailing spaces', method: 'POST', path: '/v1/webhooks',
    body: body({ headers: { 'X-Euro': '10 €', 'X-Ctl': 'a\u0001b', 'X-Tab': 'a\tb', 'X-Lead': ' a', 'X-Trail': 'a ', 'X-Del': 'a\u007fb', 'X-Fine': 'Bearer abc=/+' } }),
    status: 422, check: (r) => {
      assert.deepEqual(r.body.error.details.map((d: { path: string }) => d.path).sort(), ['headers.X-Ctl', 'headers.X-Del', 'headers.X-Euro', 'headers.X-Lead', 'headers.X-Tab', 'headers.X-Trail'])
      assert.match(r.body.error.details[0].message, /printable ASCII/)
    } },
  { name: 'PATCH checks headers the same way', method: 'PATCH', path: (f) => `/v1/webhooks/${f.webhook}`, body: { headers: { 'X-Euro': '€' } }, status: 422,
    check: (r) => assert.equal(firstDetail(r).path, 'headers.X-Euro') },
  { name: 'printable ASCII header values and token names are accepted', method: 'POST', path: '/v1/webhooks',
    body: body({ headers: { "X-A!#$%&'*+.^_`|~1": 'v a l u e ~!', 'X-Empty': '' } }), status: 201 },
  { name: 'read-only fields', method: 'POST', path: '/v1/webhooks', body: body({ retry_count: 10, active: false }), status: 422, check: (r) => {
    assert.ok(r.body.error.details.every((d: { message: string }) => /read-only/.test(d.message)))
  } },
  { name: 'no key', method: 'GET', path: '/v1/webhooks', as: 'anonymous', status: 401 },
  { name: 'no scope', method: 'POST', path: '/v1/webhooks', body: body(), as: 'unscoped', status: 403, check: (r) => assert.match(r.body.error.message, /webhooks:write/) },
  { name: 'deliveries need webhooks:read', method: 'GET', path: '/v1/webhooks/deliveries', as: 'unscoped', status: 403 },
  { name: 'another tenant\'s subscription', method: 'GET', path: (f) => `/v1/webhooks/${f.foreignWebhook}`, status: 404 },
  { name: 'another tenant\'s subscription (patch)', method: 'PATCH', path: (f) => `/v1/webhooks/${f.foreignWebhook}`, body: { active: false }, status: 404 },
  { name: 'another tenant\'s subscription (delete)', method: 'DELETE', path: (f) => `/v1/webhooks/${f.foreignWebhook}`, status: 404 },
  { name: 'unknown delivery', method: 'GET', path: '/v1/webhooks/deliveries/del_00000000-0000-7000-8000-000000000000', status: 404 },
  { name: 'malformed delivery id', method: 'GET', path: '/v1/webhooks/deliveries/123', status: 404 },
  { name: 'retry an unknown delivery', method: 'POST', path: '/v1/webhooks/deliveries/del_00000000-0000-7000-8000-000000000000/retry', status: 404 },
  { name: '"deliveries" is not taken for a subscription id', method: 'DELETE', path: '/v1/webhooks/deliveries', status: 405, check: (r) => assert.equal(r.headers.get('allow'), 'GET, HEAD') },
  { name: 'bad status filter', method: 'GET', path: '/v1/webhooks/deliveries?status=lost', status: 400 },
  { name: 'unknown filter', method: 'GET', path: '/v1/webhooks/deliveries?webhook=wh_1', status: 400 },
  { name: 'delete', method: 'DELETE', path: (f) => `/v1/webhooks/${f.webhook}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, { id: f.webhook, deleted: true }) },
])
