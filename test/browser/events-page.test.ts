import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { openSqlite } from '../../src/engine/sqlite/sqlite.ts'
import { newId } from '../../src/lib/ids.ts'
import { launchChromium, newWatchedPage, type Watched } from '../helpers/browser.ts'
import { apiClient, migratedDb, runJson, startServe, until, type ServeProcess } from '../helpers/cli.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

// The dashboard's Events page (issue 57) in real Chromium against a spawned `serve`: the latest
// events, then new ones as they happen, read from GET /v1/events/stream with fetch() (the session
// needs its header, which EventSource cannot send); the type filter on both, kept in the address;
// one event with the deliveries it made; the stream closed when the page is left or paused, and
// resumed after a drop without losing what happened meanwhile.

const LIVE = 10_000

describe('the Events page in Chromium', () => {
  let dir: string
  let db: string
  let serve: ServeProcess
  let serveArgs: string[]
  let browser: Browser
  let rx: Receiver
  let tenantId: string
  let api: ReturnType<typeof apiClient>

  const link = async (args: string[] = []) => (await runJson(['dashboard', 'link', '--db', db, '--base-url', serve.url, ...args])).url as string
  const eventsUrl = (query = '') => `${serve.url}/dashboard/t/${tenantId}/events${query}`

  /** A signed-in page of its own (the tenant's link, or the operator's), watched for script errors and CSP violations. */
  async function signedIn(operator = false): Promise<{ context: BrowserContext; page: Page; watched: Watched }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    const { page, watched } = await newWatchedPage(context)
    await page.goto(await link(operator ? [] : ['--tenant', tenantId]))
    await page.waitForURL(operator ? '**/dashboard/tenants' : '**/overview')
    return { context, page, watched }
  }

  /** The event ids the page shows, top to bottom. */
  const shown = (page: Page) => page.locator('tr[data-event]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-event')!))
  const live = (page: Page) => page.locator('[data-state=live]').waitFor({ timeout: LIVE })
  const newest = async (type = '') => (await api('GET', `/v1/events?limit=50${type ? `&type=${type}` : ''}`)).body.data as { id: string; event: string; data: { id: string } }[]
  const streamsOpen = async () => Number(/^travelops_event_streams (\d+)$/m.exec(await (await fetch(`${serve.url}/metrics`)).text())![1])
  const customer = async (n: string) => (await api('POST', '/v1/customers', { firstName: n, lastName: 'Test', email: `${n.toLowerCase()}@example.com` })).body.data as { id: string }
  const order = async (n: string) => (await api('POST', '/v1/orders', {
    customer: { firstName: n, lastName: 'Traveller', email: `${n.toLowerCase()}@example.com` }, items: [{ description: 'Fjord cruise', quantity: 1, unitPrice: 99 }], currency: 'EUR',
  })).body.data as { id: string }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-events-page-'))
    db = await migratedDb(join(dir, 'travelops.db'))
    rx = await startReceiver()
    serveArgs = ['--db', db, '--allow-private-targets', '--metrics', '--log-level', 'error']
    serve = await startServe(serveArgs)
    browser = await launchChromium()
    tenantId = (await runJson(['tenants', 'create', '--db', db, '--name', 'Tromsø Tours'])).id
    api = apiClient(serve.url, (await runJson(['keys', 'create', '--db', db, '--tenant', tenantId])).key)
    for (const events of [['order.created', 'order.updated'], ['order.created', 'customer.created']]) {
      assert.equal((await api('POST', '/v1/webhooks', { url: `${rx.url}/${events[1]}`, events, secret: 'events-page-secret-0123' })).status, 201)
    }
    // Another tenant's events, which none of this tenant's pages may show.
    const other = await runJson(['tenants', 'create', '--db', db, '--name', 'Other'])
    const otherApi = apiClient(serve.url, (await runJson(['keys', 'create', '--db', db, '--tenant', other.id])).key)
    assert.equal((await otherApi('POST', '/v1/customers', { firstName: 'Elsewhere', lastName: 'X', email: 'x@example.com' })).status, 201)
    await order('Solveig')
    await customer('Ingrid')
  })

  after(async () => {
    await browser?.close()
    await serve?.stop()
    await rx?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('a tenant session: the latest events, then an order made through the API appears at the top by itself', async () => {
    const { context, page, watched } = await signedIn()
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Events', exact: true }).click()
    await page.getByRole('heading', { name: 'Events', level: 1 }).waitFor()
    await live(page)
    assert.deepEqual(await shown(page), (await newest()).map((e) => e.id), 'the tenant\'s events, newest first, and no other tenant\'s')
    const made = await order('Astrid')
    const row = page.locator('tr[data-event]', { hasText: made.id })
    await row.waitFor({ timeout: LIVE })
    assert.deepEqual(await shown(page), (await newest()).map((e) => e.id), 'the new events at the top, in order')
    assert.equal(await row.locator('td').first().textContent(), 'order.created')
    assert.deepEqual(watched.problems, [])
    await context.close()
  })

  test('the type filter narrows the list and the stream, and stays in the address', async () => {
    const { context, page, watched } = await signedIn()
    await page.goto(eventsUrl())
    await live(page)
    await page.getByLabel('Type').selectOption('customer.*')
    await page.waitForURL(/\/events\?type=customer\.\*$/)
    await live(page)
    assert.deepEqual(await shown(page), (await newest('customer.*')).map((e) => e.id))
    // An order with a new customer writes customer.created and order.created together; a customer
    // made after it is seen only once every earlier event of the stream has been.
    const withCustomer = await order('Kari')
    const later = await customer('Liv')
    await page.locator('tr[data-event]', { hasText: later.id }).waitFor({ timeout: LIVE })
    assert.equal(await page.locator('tr[data-event]', { hasText: withCustomer.id }).count(), 0, 'no order event')
    assert.deepEqual(await shown(page), (await newest('customer.*')).map((e) => e.id))
    await page.reload()
    await live(page)
    assert.equal(await page.getByLabel('Type').inputValue(), 'customer.*')
    assert.deepEqual(await shown(page), (await newest('customer.*')).map((e) => e.id))
    // A list the catalog does not offer as one choice (two names) is shown as it is.
    await page.goto(eventsUrl('?type=order.created,customer.created'))
    await live(page)
    assert.equal(await page.getByLabel('Type').inputValue(), 'order.created,customer.created')
    assert.deepEqual(await shown(page), (await newest('order.created,customer.created')).map((e) => e.id))
    // A type no event has: the API's refusal, and no stream.
    await page.goto(eventsUrl('?type=order.shipped'))
    await page.getByRole('alert').filter({ hasText: 'order.shipped' }).waitFor()
    await page.locator('[data-state=stopped]').waitFor()
    assert.deepEqual(watched.problems, [])
    await context.close()
  })

  test('one event opened from its row: the envelope and the deliveries it made, each opening its delivery', async () => {
    const { context, page, watched } = await signedIn()
    const made = await order('Marit')
    const event = (await newest('order.created'))[0]!
    assert.equal(event.data.id, made.id)
    const deliveries = async () => (await api('GET', `/v1/webhooks/deliveries?event_id=${event.id}`)).body.data as { id: string; status: string }[]
    await until('both deliveries delivered', async () => (await deliveries()).filter((d) => d.status === 'delivered').length === 2)
    await page.goto(eventsUrl())
    await page.locator(`tr[data-event="${event.id}"] td[data-label=Time]`).click()
    await page.waitForURL(`**/events/${event.id}`)
    await page.getByRole('heading', { name: 'order.created', level: 1 }).waitFor()
    const envelope = JSON.parse((await page.getByLabel('Envelope').textContent())!)
    assert.deepEqual(envelope, (await api('GET', `/v1/events/${event.id}`)).body.data)
    const rows = page.locator('tr[data-delivery]')
    await until('the deliveries shown', async () => (await rows.count()) === 2)
    assert.deepEqual(await rows.evaluateAll((r) => r.map((x) => x.getAttribute('data-delivery'))), (await deliveries()).map((d) => d.id))
    assert.equal(await rows.getByText('delivered').count(), 2)
    assert.match((await rows.first().locator('td').first().textContent())!, /^http:\/\/127\.0\.0\.1:\d+\/(order.updated|customer.created)$/, 'each endpoint by its URL')
    await rows.first().locator('td').first().getByRole('link').click()
    const payload = page.getByLabel('Payload')
    await payload.waitFor()
    assert.deepEqual(JSON.parse((await payload.textContent())!), envelope, 'the delivery\'s body is the event')
    assert.deepEqual(watched.problems, [])
    await context.close()
  })

  test('leaving the page or pausing closes its stream: six visits in a row, each live', async () => {
    const { context, page, watched } = await signedIn()
    const nav = page.getByRole('navigation', { name: 'Sections' })
    assert.equal(await streamsOpen(), 0)
    // A session holds at most 5 streams: a sixth visit would be refused if a visit left one open.
    for (let visit = 1; visit <= 6; visit++) {
      await nav.getByRole('link', { name: 'Events', exact: true }).click()
      await live(page)
      await until(`visit ${visit}: one stream open`, async () => (await streamsOpen()) === 1)
      await nav.getByRole('link', { name: 'Overview', exact: true }).click()
      await page.getByRole('heading', { name: 'Overview' }).waitFor()
      await until(`visit ${visit}: the stream closed`, async () => (await streamsOpen()) === 0)
    }
    // Paused: no stream; resumed: what happened meanwhile comes first.
    await nav.getByRole('link', { name: 'Events', exact: true }).click()
    await live(page)
    await page.getByRole('button', { name: 'Pause' }).click()
    await page.locator('[data-state=paused]').waitFor()
    await until('the stream closed while paused', async () => (await streamsOpen()) === 0)
    const meanwhile = await customer('Ragnhild')
    await page.getByRole('button', { name: 'Resume' }).click()
    await page.locator('tr[data-event]', { hasText: meanwhile.id }).waitFor({ timeout: LIVE })
    await live(page)
    assert.deepEqual(await shown(page), (await newest()).map((e) => e.id))
    assert.deepEqual(watched.problems, [])
    await context.close()
    await until('the closed tab\'s stream closed', async () => (await streamsOpen()) === 0)
  })

  test('the operator, with a tenant chosen: the same page, the tenant\'s events only', async () => {
    const { context, page, watched } = await signedIn(true)
    await page.goto(eventsUrl())
    await live(page)
    assert.deepEqual(await shown(page), (await newest()).map((e) => e.id))
    const made = await customer('Sigrid')
    await page.locator('tr[data-event]', { hasText: made.id }).waitFor({ timeout: LIVE })
    // By keyboard: a row's event is a link.
    await page.locator('tr[data-event] a').first().focus()
    await page.keyboard.press('Enter')
    await page.waitForURL(/\/events\/evt_[0-9a-f-]+$/)
    await page.getByLabel('Envelope').waitFor()
    // The catalog's old address with an event named goes on to the catalog.
    await page.goto(eventsUrl('#order.created'))
    await page.waitForURL('**/event-types#order.created')
    await page.getByRole('heading', { name: 'order.created' }).waitFor()
    assert.deepEqual(watched.problems, [])
    await context.close()
  })

  test('a dropped stream says so and resumes after the last event it showed', async () => {
    const { context, page, watched } = await signedIn()
    await page.goto(eventsUrl())
    await live(page)
    const table = async () => (await page.locator('table.events').boundingBox())!.y
    const top = await table()
    const port = new URL(serve.url).port
    await serve.stop()
    await page.locator('[data-state=reconnecting]').waitFor({ timeout: LIVE })
    assert.match((await page.locator('.tail-note').textContent())!, /\. Trying again; nothing made meanwhile is missed\.$/)
    assert.equal(await table(), top, 'saying so moves nothing')
    // An event written while serve is down: only a stream that resumes after the last one it had can show it.
    const id = newId('evt')
    const at = new Date().toISOString()
    const sqlite = openSqlite(db)
    try {
      sqlite.prepare('INSERT INTO events (id, tenant_id, name, payload, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(id, tenantId, 'customer.created', JSON.stringify({ id, event: 'customer.created', timestamp: at, tenant_id: tenantId, data: { id: 'cus_written-while-down' } }), at)
    } finally {
      sqlite.close()
    }
    serve = await startServe([...serveArgs, '--port', port])
    await page.locator(`tr[data-event="${id}"]`).waitFor({ timeout: LIVE })
    await live(page)
    assert.equal((await shown(page))[0], id)
    // The browser logs the refused connections while serve was down; nothing else.
    assert.deepEqual(watched.problems.filter((p) => !/ERR_CONNECTION_REFUSED|Failed to fetch/.test(p)), [])
    await context.close()
  })
})
