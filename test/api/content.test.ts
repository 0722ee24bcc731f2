import assert from 'node:assert/strict'
import { eventScenarios, hasPaths, isReadOnly, unknownId } from '../helpers/catalog.ts'
import type { Fixture } from '../helpers/scenario.ts'

interface F extends Fixture {
  a: any // destinations/north-cape, changed by PATCH rows
  same: any // destinations/lofoten, only no-op or refused PATCHes
  page: any // pages/north-cape: same slug, other entity
  gone: any // destinations/tromso, deleted
  b: any // the other tenant's destinations/north-cape
}

const body = (over: Record<string, unknown> = {}) => ({ slug: 'svalbard', title: 'Svalbard', ...over })
const ids = (r: { body: { data: { id: string }[] } }) => r.body.data.map((c) => c.id)

// Content emits no events: every row also proves that nothing reached the outbox.
eventScenarios<F>('content API', async (base) => {
  const make = async (t: typeof base.tenant, entity: string, over: Record<string, unknown>) =>
    (await t.request('POST', `/v1/content/${entity}`, { body: body(over) })).body.data
  return {
    ...base,
    a: await make(base.tenant, 'destinations', { slug: 'north-cape', title: 'North Cape', data: { lat: 71.17, tags: ['midnight sun'] }, status: 'published' }),
    same: await make(base.tenant, 'destinations', { slug: 'lofoten', title: 'Lofoten', body: '# Lofoten', metadata: { k: 'v' } }),
    page: await make(base.tenant, 'pages', { slug: 'north-cape', title: 'About the North Cape' }),
    gone: await make(base.tenant, 'destinations', { slug: 'tromso', title: 'Tromsø' }),
    b: await make(base.other, 'destinations', { slug: 'north-cape', title: 'Theirs' }),
  }
}, [
  {
    name: 'minimal body: draft, data {}, entity from the path', method: 'POST', path: '/v1/content/destinations', body: body(), status: 201,
    check: (r) => {
      assert.match(r.body.data.id, /^cnt_[0-9a-f-]{36}$/)
      assert.deepEqual({ ...r.body.data, id: 0, createdAt: 0, updatedAt: 0 }, {
        id: 0, entity: 'destinations', slug: 'svalbard', title: 'Svalbard', body: null, data: {}, status: 'draft', metadata: {}, createdAt: 0, updatedAt: 0,
      })
    },
  },
  {
    name: 'nested data kept as given', method: 'POST', path: '/v1/content/faqs', status: 201,
    body: body({ slug: 'q-1', data: { answer: 'yes', order: 1, nested: { list: [1, 'two', null, true] } }, status: 'published', body: 'text' }),
    check: (r) => assert.deepEqual(r.body.data.data, { answer: 'yes', order: 1, nested: { list: [1, 'two', null, true] } }),
  },
  { name: 'entity with digits, dash, underscore', method: 'POST', path: '/v1/content/x1_a-b', body: body(), status: 201, check: (r) => assert.equal(r.body.data.entity, 'x1_a-b') },
  { name: 'entity of 50 characters', method: 'POST', path: `/v1/content/${'e'.repeat(50)}`, body: body(), status: 201 },
  { name: 'entity of 51 characters', method: 'POST', path: `/v1/content/${'e'.repeat(51)}`, body: body(), status: 404, code: 'not_found' },
  { name: 'entity in capitals', method: 'GET', path: '/v1/content/Destinations', status: 404, code: 'not_found' },
  { name: 'entity starting with a digit', method: 'GET', path: '/v1/content/1pages', status: 404 },
  { name: 'entity with a dot', method: 'POST', path: '/v1/content/pages.json', body: body(), status: 404 },
  { name: 'duplicate slug in the entity', method: 'POST', path: '/v1/content/destinations', body: body({ slug: 'north-cape' }), status: 409, code: 'conflict' },
  { name: 'same slug in another entity is free', method: 'POST', path: '/v1/content/faqs', body: body({ slug: 'north-cape' }), status: 201 },
  { name: "the other tenant's slug is free here", method: 'POST', path: '/v1/content/destinations', body: body({ slug: 'svalbard-2' }), as: 'other', status: 201 },
  { name: 'slug with capitals and spaces', method: 'POST', path: '/v1/content/pages', body: body({ slug: 'Hello World' }), status: 422, check: (r) => hasPaths(r, 'slug') },
  { name: 'slug with a double dash', method: 'POST', path: '/v1/content/pages', body: body({ slug: 'a--b' }), status: 422, check: (r) => hasPaths(r, 'slug') },
  { name: 'slug of 201 characters', method: 'POST', path: '/v1/content/pages', body: body({ slug: 'a'.repeat(201) }), status: 422, check: (r) => hasPaths(r, 'slug') },
  { name: 'slug of 200 characters', method: 'POST', path: '/v1/content/pages', body: body({ slug: 'a'.repeat(200) }), status: 201 },
  { name: 'data as an array', method: 'POST', path: '/v1/content/pages', body: body({ data: [1, 2] }), status: 422, check: (r) => hasPaths(r, 'data') },
  { name: 'data as a string', method: 'POST', path: '/v1/content/pages', body: body({ data: '{}' }), status: 422, check: (r) => hasPaths(r, 'data') },
  { name: 'data over 256 KiB', method: 'POST', path: '/v1/content/pages', body: body({ data: { blob: 'x'.repeat(270_000) } }), status: 422, check: (r) => hasPaths(r, 'data') },
  { name: 'unknown status', method: 'POST', path: '/v1/content/pages', body: body({ status: 'live' }), status: 422, check: (r) => hasPaths(r, 'status') },
  { name: 'missing slug and title', method: 'POST', path: '/v1/content/pages', body: {}, status: 422, check: (r) => hasPaths(r, 'slug', 'title') },
  { name: 'entity is read-only', method: 'POST', path: '/v1/content/pages', body: body({ entity: 'faqs' }), status: 422, check: (r) => isReadOnly(r, 'entity') },
  { name: 'unknown field', method: 'POST', path: '/v1/content/pages', body: body({ author: 'me' }), status: 422, check: (r) => hasPaths(r, 'author') },
  { name: 'no key', method: 'POST', path: '/v1/content/pages', body: body(), as: 'anonymous', status: 401 },
  { name: 'no scope', method: 'POST', path: '/v1/content/pages', body: body(), as: 'unscoped', status: 403, check: (r) => assert.match(r.body.error.message, /content:write/) },

  { name: 'own record', method: 'GET', path: (f) => `/v1/content/destinations/${f.a.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.a) },
  { name: 'record under another entity name', method: 'GET', path: (f) => `/v1/content/pages/${f.a.id}`, status: 404, code: 'not_found' },
  { name: 'unknown id', method: 'GET', path: `/v1/content/destinations/${unknownId('cnt')}`, status: 404 },
  { name: 'malformed id', method: 'GET', path: '/v1/content/destinations/north-cape', status: 404 },
  { name: "another tenant's id", method: 'GET', path: (f) => `/v1/content/destinations/${f.b.id}`, status: 404 },
  { name: 'other tenant reads ours', method: 'GET', path: (f) => `/v1/content/destinations/${f.a.id}`, as: 'other', status: 404 },
  { name: 'no scope', method: 'GET', path: '/v1/content/destinations', as: 'unscoped', status: 403, check: (r) => assert.match(r.body.error.message, /content:read/) },
  { name: 'no key', method: 'GET', path: (f) => `/v1/content/destinations/${f.a.id}`, as: 'anonymous', status: 401 },
  {
    name: 'list: own records of this entity only, newest first', method: 'GET', path: '/v1/content/destinations?limit=100', status: 200,
    check: (r, f) => {
      const got = ids(r)
      assert.ok([f.a.id, f.same.id, f.gone.id].every((id) => got.includes(id)))
      assert.ok(!got.includes(f.page.id) && !got.includes(f.b.id))
      assert.ok(r.body.data.every((c: any) => c.entity === 'destinations'))
      assert.deepEqual(got, [...got].sort().reverse())
    },
  },
  { name: 'an entity with no records', method: 'GET', path: '/v1/content/blog', status: 200, check: (r) => assert.deepEqual(r.body, { data: [], has_more: false, next_cursor: null }) },
  { name: 'slug filter', method: 'GET', path: '/v1/content/destinations?slug=north-cape', status: 200, check: (r, f) => assert.deepEqual(ids(r), [f.a.id]) },
  { name: 'status filter', method: 'GET', path: '/v1/content/destinations?status=published', status: 200, check: (r, f) => assert.deepEqual(ids(r), [f.a.id]) },
  {
    name: "other tenant's list never holds ours", method: 'GET', path: '/v1/content/destinations', as: 'other', status: 200,
    check: (r, f) => assert.ok(ids(r).includes(f.b.id) && !ids(r).includes(f.a.id) && !ids(r).includes(f.same.id)),
  },
  { name: 'bad status filter', method: 'GET', path: '/v1/content/destinations?status=live', status: 400, check: (r) => hasPaths(r, 'status') },
  { name: 'bad slug filter', method: 'GET', path: '/v1/content/destinations?slug=North%20Cape', status: 400, check: (r) => hasPaths(r, 'slug') },
  { name: 'unknown query parameter', method: 'GET', path: '/v1/content/destinations?entity=pages', status: 400 },

  {
    name: 'publish and replace data', method: 'PATCH', path: (f) => `/v1/content/destinations/${f.gone.id}`, body: { status: 'published', data: { k: 1 } }, status: 200,
    check: (r, f) => assert.deepEqual({ ...r.body.data, updatedAt: 0 }, { ...f.gone, status: 'published', data: { k: 1 }, updatedAt: 0 }),
  },
  { name: 'data null resets to {}; body null clears', method: 'PATCH', path: (f) => `/v1/content/destinations/${f.a.id}`, body: { data: null, body: null }, status: 200, check: (r) => assert.deepEqual([r.body.data.data, r.body.data.body], [{}, null]) },
  { name: 'rename the slug', method: 'PATCH', path: (f) => `/v1/content/destinations/${f.a.id}`, body: { slug: 'nordkapp' }, status: 200, check: (r) => assert.equal(r.body.data.slug, 'nordkapp') },
  { name: 'the old slug is free again', method: 'POST', path: '/v1/content/destinations', body: body({ slug: 'north-cape' }), status: 201 },
  { name: 'slug taken in the entity', method: 'PATCH', path: (f) => `/v1/content/destinations/${f.same.id}`, body: { slug: 'nordkapp' }, status: 409, code: 'conflict' },
  { name: 'same values: unchanged', method: 'PATCH', path: (f) => `/v1/content/destinations/${f.same.id}`, body: { slug: 'lofoten', status: 'draft', body: '# Lofoten', metadata: { k: 'v' } }, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.same) },
  { name: 'read-only entity', method: 'PATCH', path: (f) => `/v1/content/destinations/${f.same.id}`, body: { entity: 'pages' }, status: 422, check: (r) => isReadOnly(r, 'entity') },
  { name: 'null title', method: 'PATCH', path: (f) => `/v1/content/destinations/${f.same.id}`, body: { title: null }, status: 422, check: (r) => hasPaths(r, 'title') },
  { name: 'PATCH under another entity name', method: 'PATCH', path: (f) => `/v1/content/pages/${f.same.id}`, body: { title: 'x' }, status: 404 },
  { name: 'other tenant patches ours', method: 'PATCH', path: (f) => `/v1/content/destinations/${f.same.id}`, body: { title: 'x' }, as: 'other', status: 404 },
  { name: "another tenant's id", method: 'PATCH', path: (f) => `/v1/content/destinations/${f.b.id}`, body: { title: 'x' }, status: 404 },
  { name: 'bad entity', method: 'PATCH', path: (f) => `/v1/content/BAD/${f.same.id}`, body: { title: 'x' }, status: 404 },
  { name: 'no scope', method: 'PATCH', path: (f) => `/v1/content/destinations/${f.same.id}`, body: { title: 'x' }, as: 'unscoped', status: 403 },
  { name: 'refused patches changed nothing', method: 'GET', path: (f) => `/v1/content/destinations/${f.same.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.same) },

  { name: 'DELETE under another entity name', method: 'DELETE', path: (f) => `/v1/content/pages/${f.gone.id}`, status: 404 },
  { name: 'other tenant deletes ours', method: 'DELETE', path: (f) => `/v1/content/destinations/${f.gone.id}`, as: 'other', status: 404 },
  { name: 'no scope', method: 'DELETE', path: (f) => `/v1/content/destinations/${f.gone.id}`, as: 'unscoped', status: 403 },
  { name: 'own record', method: 'DELETE', path: (f) => `/v1/content/destinations/${f.gone.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body, { data: { id: f.gone.id, deleted: true } }) },
  { name: 'deleted one is gone', method: 'GET', path: (f) => `/v1/content/destinations/${f.gone.id}`, status: 404 },
  { name: 'the page with the same slug survived', method: 'GET', path: (f) => `/v1/content/pages/${f.page.id}`, status: 200, check: (r, f) => assert.deepEqual(r.body.data, f.page) },
  { name: "another tenant's id", method: 'DELETE', path: (f) => `/v1/content/destinations/${f.b.id}`, status: 404 },
])
