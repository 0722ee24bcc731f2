import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { launchChromium, newWatchedPage, screenshotPage } from '../helpers/browser.ts'
import { apiClient, migratedDb, runJson, startServe, until, type ServeProcess } from '../helpers/cli.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

// CONTRACT §14 at a phone's width (issue 54): every page of the dashboard, filled with realistic
// data (several deliveries, keys and endpoints, long URLs and ids), at 390 and 1280 px, light and
// dark. No page scrolls sideways; the status, state and action columns stay on screen; every
// section of the navigation can be reached; checkboxes keep their shape; no CSP violation or
// script error. Each page × width × scheme is screenshotted into
// test-output/screenshots/<page>-<width>-<scheme>.png.

const WIDTHS = [390, 1280] as const
const SCHEMES = ['light', 'dark'] as const
const SECTIONS = ['Overview', 'Endpoints', 'Deliveries', 'Events', 'Event catalog', 'API keys']

describe('the dashboard at phone width', () => {
  let dir: string
  let db: string
  let serve: ServeProcess
  let browser: Browser
  let good: Receiver
  let bad: Receiver
  let tenantId: string
  let webhookId: string
  let deliveryId: string
  let eventId: string
  let session: Awaited<ReturnType<Awaited<ReturnType<Browser['newContext']>>['storageState']>>

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-phone-'))
    db = await migratedDb(join(dir, 'travelops.db'))
    good = await startReceiver()
    bad = await startReceiver({ respond: () => ({ status: 503, body: 'upstream unavailable' }) })
    serve = await startServe(['--db', db, '--allow-private-targets', '--retry-base', '600000', '--log-level', 'error'])
    browser = await launchChromium()

    const tenant = await runJson(['tenants', 'create', '--db', db, '--name', 'Nordlys Expeditions & Fjord Adventure Travel Company International'])
    tenantId = tenant.id
    const key = await runJson(['keys', 'create', '--db', db, '--tenant', tenantId, '--name', 'back office integration key', '--rate-limit', '10000'])
    const api = apiClient(serve.url, key.key)
    // Keys: scoped, limited, expiring, and one revoked.
    const scoped = await api('POST', '/v1/keys', { name: 'booking website (production, eu-north-1)', scopes: ['orders:write', 'customers:read', 'products:read', 'webhooks:read', 'invoices:read'], rate_limit: 5000, expires_in: '90d' })
    assert.equal(scoped.status, 201, JSON.stringify(scoped.body))
    await api('POST', '/v1/keys', { name: 'reporting', scopes: ['orders:read', 'payments:read'] })
    const old = await api('POST', '/v1/keys', { name: 'old partner feed', scopes: ['*'] })
    assert.equal((await api('DELETE', `/v1/keys/${old.body.data.id}`)).status, 200)
    // Endpoints with long URLs: two answered, one failing.
    const long = (rx: Receiver, name: string) => `${rx.url}/webhooks/travelops/${name}/receiver-with-a-rather-long-path-segment?account=acct_7f3e9b2c41d84a0f9e6b&signature-version=v1`
    const webhooks: string[] = []
    for (const [rx, name, events] of [[good, 'bookings', ['order.created', 'order.updated', 'payment.received']], [good, 'accounting', ['*']], [bad, 'crm-sync', ['order.created', 'customer.created']]] as const) {
      const r = await api('POST', '/v1/webhooks', { url: long(rx, name), events, secret: `whsec_${name}-secret-0123456789abcdef` })
      assert.equal(r.status, 201, JSON.stringify(r.body))
      webhooks.push(r.body.data.id)
    }
    webhookId = webhooks[0]!
    for (let i = 0; i < 4; i++) {
      const order = await api('POST', '/v1/orders', {
        customer: { firstName: 'Solveig', lastName: `Haugen-Løvstad ${i}`, email: `solveig.${i}@example.com` },
        items: [{ description: 'Northern lights snowmobile safari with dinner in a Sámi lavvo', quantity: 2, unitPrice: 189 }], currency: 'NOK',
      })
      assert.equal(order.status, 201)
      if (i === 0) await api('POST', `/v1/orders/${order.body.data.id}/confirm`)
    }
    await until('the failing endpoint\'s deliveries have failed', async () => {
      const r = await api('GET', `/v1/webhooks/deliveries?webhook_id=${webhooks[2]}&status=failed`)
      return r.body.data.length >= 4
    })
    await until('the others delivered', async () => (await api('GET', '/v1/webhooks/deliveries?status=delivered')).body.data.length >= 8)
    deliveryId = (await api('GET', `/v1/webhooks/deliveries?webhook_id=${webhooks[2]}&limit=1`)).body.data[0].id
    eventId = (await api('GET', '/v1/webhooks/deliveries?limit=1')).body.data[0].event_id

    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto((await runJson(['dashboard', 'link', '--db', db, '--base-url', serve.url])).url)
    await page.waitForURL('**/dashboard/tenants')
    session = await context.storageState()
    await context.close()
  })

  after(async () => {
    await browser?.close()
    await serve?.stop()
    await good?.close()
    await bad?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  /** The pages, each with what shows it has its data; `live`: it holds a stream open (the network never goes idle), ready once it says Live. */
  const pages = (): { name: string; url: string; ready: string; live?: boolean }[] => {
    const base = `${serve.url}/dashboard/t/${tenantId}`
    return [
      { name: 'tenants', url: `${serve.url}/dashboard/tenants`, ready: 'tr[data-tenant]' },
      { name: 'overview', url: `${base}/overview`, ready: 'canvas' },
      { name: 'endpoints', url: `${base}/endpoints`, ready: 'td .badge' },
      { name: 'endpoint-new', url: `${base}/endpoints/new`, ready: 'input[name=event]' },
      { name: 'endpoint', url: `${base}/endpoints/${webhookId}`, ready: 'tr[data-delivery] .badge' },
      { name: 'deliveries', url: `${base}/deliveries`, ready: 'tr[data-delivery] .badge' },
      { name: 'delivery', url: `${base}/deliveries/${deliveryId}`, ready: 'li[data-attempt]' },
      { name: 'events', url: `${base}/events`, ready: 'tr[data-event]', live: true },
      { name: 'event', url: `${base}/events/${eventId}`, ready: 'tr[data-delivery] .badge' },
      { name: 'event-types', url: `${base}/event-types`, ready: '.catalog .card' },
      { name: 'keys', url: `${base}/keys`, ready: 'tr[data-key] .badge' },
    ]
  }

  /** Elements whose box lies (partly) outside the viewport's width: what a user could not see without scrolling. */
  const offscreen = (page: Page, selector: string, width: number) => page.$$eval(selector, (els, w) => els
    .map((e) => ({ text: (e.textContent ?? '').trim().slice(0, 40), box: e.getBoundingClientRect(), view: Math.min(w, e.ownerDocument.documentElement.clientWidth) }))
    .filter((e) => e.box.width === 0 || e.box.left < 0 || e.box.right > e.view)
    .map((e) => `${e.text} [${Math.round(e.box.left)}, ${Math.round(e.box.right)}]`), width)

  for (const width of WIDTHS) {
    for (const scheme of SCHEMES) {
      test(`${width} px, ${scheme}: no page scrolls sideways, statuses and actions on screen, every section reachable`, async () => {
        const context = await browser.newContext({ storageState: session, viewport: { width, height: 844 }, colorScheme: scheme })
        const { page, watched } = await newWatchedPage(context)
        const shots: string[] = []
        // Every fault of every page, reported together.
        const faults: string[] = []
        const check = (ok: boolean, fault: string) => void (ok || faults.push(fault))
        for (const p of pages()) {
          await page.goto(p.url)
          await page.locator(p.ready).first().waitFor()
          if (p.live) await page.locator('[data-state=live]').waitFor()
          else await page.waitForLoadState('networkidle')
          const scroll = Number(await page.evaluate('document.documentElement.scrollWidth'))
          check(scroll <= width, `${p.name} is ${scroll} px wide`)
          check(await page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") === (scheme === 'dark'), `${p.name}: not ${scheme}`)
          // Statuses, states and row actions are on screen without scrolling anything.
          for (const f of await offscreen(page, 'main .badge, main td .btn, main .pager .btn, main .page-actions > *', width)) faults.push(`${p.name}: off screen: ${f}`)
          // Every section of the navigation is visible on screen.
          const nav = page.getByRole('navigation', { name: 'Sections' })
          for (const section of p.name === 'tenants' ? ['Tenants'] : ['Tenants', ...SECTIONS]) {
            check(await nav.getByRole('link', { name: section, exact: true }).isVisible(), `${p.name}: ${section} not visible`)
          }
          for (const f of await offscreen(page, 'nav[aria-label=Sections] a', width)) faults.push(`${p.name}: navigation off screen: ${f}`)
          if (p.name === 'endpoint-new') {
            const boxes = await page.$$eval('input[type=checkbox]', (els) => els.map((e) => e.getBoundingClientRect()).map((b) => [b.width, b.height] as const))
            check(boxes.length >= 15, `${boxes.length} checkboxes`)
            for (const [w, h] of boxes) check(w >= 16 && h >= 16 && Math.abs(w - h) < 0.5, `a checkbox is ${w} × ${h} px`)
          }
          shots.push(await screenshotPage(page, `${p.name}-${width}-${scheme}`))
        }
        assert.deepEqual(faults, [])
        assert.equal(shots.length, pages().length)
        assert.deepEqual(watched.problems, [])
        await context.close()
      })
    }
  }
})
