import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { encodeCursor } from '../../src/http/pagination.ts'
import { startTestApp, type TestApp, type TestSession, type TestTenant } from '../helpers/app.ts'

// Every list takes back only the cursors it writes (docs/decisions/0043-cursors-by-shape.md):
// any other value of `cursor`, damaged or forged, is a 400 bad_request naming `cursor`.

/** Each list's path as requested, and the id prefix of its records (a new list must be added here). */
const LISTS: Record<string, [string, string]> = {
  '/v1/keys': ['/v1/keys', 'key'],
  '/v1/orders': ['/v1/orders', 'ord'],
  '/v1/customers': ['/v1/customers', 'cus'],
  '/v1/products': ['/v1/products', 'prd'],
  '/v1/itineraries': ['/v1/itineraries', 'iti'],
  '/v1/invoices': ['/v1/invoices', 'inv'],
  '/v1/payments': ['/v1/payments', 'pay'],
  '/v1/suppliers': ['/v1/suppliers', 'sup'],
  '/v1/inquiries': ['/v1/inquiries', 'inq'],
  '/v1/content/:entity': ['/v1/content/destinations', 'cnt'],
  '/v1/webhooks': ['/v1/webhooks', 'wh'],
  '/v1/webhooks/deliveries': ['/v1/webhooks/deliveries', 'del'],
  '/v1/events': ['/v1/events', 'evt'],
  '/v1/admin/tenants': ['/v1/admin/tenants', 'ten'],
}

const UUID = '0190a0b0-1234-7abc-8def-0123456789ab'
const b64 = (text: string) => Buffer.from(text).toString('base64url')

/** Cursors no list writes, for a list of `prefix` records. */
function forged(prefix: string): [string, string][] {
  const good = encodeCursor(`${prefix}_${UUID}`)
  const other = prefix === 'ord' ? 'cus' : 'ord'
  const cases: [string, string][] = [
    ['empty', ''],
    ['not base64', '!!!'],
    ['random text', 'hello'],
    ['a bare id', `${prefix}_${UUID}`],
    ['not an id', b64('{"after":"zzz"}')],
    ['an empty id', b64('{"after":""}')],
    ['a number', b64('{"after":1}')],
    ['JSON null', b64('null')],
    ['another list\'s id', encodeCursor(`${other}_${UUID}`)],
    ['an id in capitals', encodeCursor(`${prefix}_${UUID.toUpperCase()}`)],
    ['an extra field', b64(`{"after":"${prefix}_${UUID}","x":1}`)],
    ['spaces in the JSON', b64(`{ "after": "${prefix}_${UUID}" }`)],
    ['a SQL fragment', b64(`{"after":"${prefix}_${UUID}' OR 1=1 --"}`)],
    ['a U+0000 in the id', b64(`{"after":"${prefix}_${UUID}\\u0000"}`)],
    ['padded', `${good}==`],
    ['standard base64', Buffer.from(`{"after":"${prefix}_${UUID}"}`).toString('base64')],
    ['cut short', good.slice(0, -4)],
    ['one character changed', good.slice(0, 20) + (good[20] === 'A' ? 'B' : 'A') + good.slice(21)],
    ['trailing garbage', `${good}AAAA`],
    ['very long', 'A'.repeat(5000)],
  ]
  return cases.filter(([, cursor]) => cursor !== good) // standard base64 is base64url for some ids
}

describe('list cursors', () => {
  let app: TestApp
  let t: TestTenant
  let operator: TestSession

  before(async () => {
    app = await startTestApp()
    t = await app.tenant('Cursor Tours')
    operator = await app.session(null)
  })
  after(() => app.close())

  const get = (route: string, query: string) => (route === '/v1/admin/tenants' ? operator.request('GET', `${LISTS[route]![0]}?${query}`) : t.request('GET', `${LISTS[route]![0]}?${query}`))

  test('every list: a cursor it writes is a 200; every malformed or forged one is a 400 bad_request naming cursor', async () => {
    const lists = app.server.routes.filter((r) => r.list).map((r) => r.path)
    assert.deepEqual([...lists].sort(), Object.keys(LISTS).sort(), 'every list route is listed here')
    for (const route of lists) {
      const prefix = LISTS[route]![1]
      const ok = await get(route, `cursor=${encodeCursor(`${prefix}_${UUID}`)}`)
      assert.equal(ok.status, 200, `${route}: a well-formed cursor: ${ok.text}`)
      for (const [name, cursor] of forged(prefix)) {
        const r = await get(route, `cursor=${encodeURIComponent(cursor)}`)
        assert.equal(r.status, 400, `${route}, ${name}: ${r.status} ${r.text}`)
        assert.equal(r.body.error.code, 'bad_request')
        assert.equal(r.body.error.details[0].path, 'cursor', `${route}, ${name}`)
      }
    }
  })

  test('a next_cursor goes on where its page stopped, and a page past the end is empty with no cursor', async () => {
    const keys = [await t.newKey(), await t.newKey()]
    const first = await t.request('GET', '/v1/keys?limit=1')
    assert.equal(first.status, 200)
    assert.equal(first.body.has_more, true)
    const seen = [first.body.data[0].id as string]
    let cursor = first.body.next_cursor as string | null
    while (cursor) {
      const next = await t.request('GET', `/v1/keys?limit=1&cursor=${cursor}`)
      assert.equal(next.status, 200, next.text)
      seen.push(...next.body.data.map((k: { id: string }) => k.id))
      cursor = next.body.next_cursor
    }
    assert.equal(new Set(seen).size, 3)
    for (const k of keys) assert.ok(seen.includes(k.id))
  })
})
