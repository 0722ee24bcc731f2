import assert from 'node:assert/strict'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { Webhook } from 'standardwebhooks'
import { SCAN_BUDGET } from '../../src/db/page-rows.ts'
import { openSqlite } from '../../src/engine/sqlite/sqlite.ts'
import { signPayload } from '../../src/delivery/sign.ts'
import { launchChromium, newWatchedPage, screenshotAll, type Shot, type Watched } from '../helpers/browser.ts'
import { apiClient, migratedDb, runJson, startServe, until, type ServeProcess } from '../helpers/cli.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

// CONTRACT §14 in real Chromium against a spawned `serve` and real receivers: the operator's
// whole journey, a tenant's link seeing its tenant only, links that work once, sign-out on the
// server, cross-origin requests refused, stored markup shown as text. Every page is
// screenshotted at desktop and phone width, light and dark, into test-output/screenshots/
// (TRAVELOPS_UPDATE_DOCS=1 also copies the two the README shows into docs/).

const XSS = '<img src=x onerror=alert(1)>'

describe('the dashboard in Chromium', () => {
  let dir: string
  let db: string
  let serve: ServeProcess
  let browser: Browser
  let good: Receiver
  let flaky: Receiver
  let failing = true
  const shots: Shot[] = []

  const link = async (args: string[] = []) => (await runJson(['dashboard', 'link', '--db', db, '--base-url', serve.url, ...args])).url as string

  /** A page in a browser context of its own (its own cookies), watched for script errors, CSP violations and dialogs. */
  async function open(url: string): Promise<{ context: BrowserContext; page: Page; watched: Watched }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    const { page, watched } = await newWatchedPage(context)
    await page.goto(url)
    return { context, page, watched }
  }

  const tenantIdOf = (page: Page) => /\/dashboard\/t\/(ten_[0-9a-f-]+)\//.exec(page.url())![1]!

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-dashboard-'))
    db = await migratedDb(join(dir, 'travelops.db'))
    good = await startReceiver()
    flaky = await startReceiver({ respond: () => ({ status: failing ? 500 : 200, body: failing ? 'not yet' : 'ok' }) })
    // Automatic retries far away: the failed delivery waits for the retry asked for in the page.
    serve = await startServe(['--db', db, '--allow-private-targets', '--retry-base', '600000', '--log-level', 'error'])
    browser = await launchChromium()
  })

  after(async () => {
    await browser?.close()
    await serve?.stop()
    await good?.close()
    await flaky?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('operator: tenants → new tenant → key shown once → endpoint from the catalog → a delivery appears → retry → test event → revoke', async () => {
    const { context, page, watched } = await open(await link())
    await page.waitForURL('**/dashboard/tenants')
    assert.equal(new URL(page.url()).hash, '', 'the token leaves the address bar')
    await page.getByRole('heading', { name: 'Tenants' }).waitFor()
    shots.push({ name: 'tenants', url: page.url() })

    await page.getByLabel('New tenant').fill('Fjord & Fell Adventures')
    await page.getByRole('button', { name: 'Create tenant' }).click()
    await page.waitForURL('**/overview')
    const tenantId = tenantIdOf(page)
    const base = `${serve.url}/dashboard/t/${tenantId}`
    await page.getByRole('heading', { name: 'Overview' }).waitFor()
    await until('the tenant name in the header', async () => (await page.locator('.tenant-name').textContent()) === 'Fjord & Fell Adventures')

    // API key: created in the page, shown once.
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'API keys' }).click()
    await page.getByRole('button', { name: 'Create key' }).click()
    await page.getByLabel('Name').fill('booking site')
    await page.getByRole('form', { name: 'New API key' }).getByRole('button', { name: 'Create key' }).click()
    const key = await page.locator('input[data-secret]').inputValue()
    assert.match(key, /^tok_[A-Za-z0-9_-]{32}$/)
    const api = apiClient(serve.url, key)
    assert.equal((await api('GET', '/v1/orders')).status, 200)
    await page.reload()
    await page.locator('tr[data-key]').first().waitFor()
    assert.ok(!(await page.content()).includes(key), 'the key is not shown again')
    shots.push({ name: 'keys', url: page.url() })

    // Endpoint: events picked from the catalog; the generated secret shown once.
    await page.goto(`${base}/endpoints`)
    await page.getByText('No endpoints yet').waitFor()
    await page.getByRole('link', { name: 'Add endpoint' }).click()
    await page.getByLabel('URL').fill(`${good.url}/hooks`)
    await page.locator('input[name=event][value="order.created"]').check()
    await page.locator('input[name=event][value="payment.received"]').check()
    shots.push({ name: 'endpoint-new', url: page.url() })
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    const secret = await page.locator('input[data-secret]').inputValue()
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'the API\'s generated secret: whsec_ + base64 of 32 bytes')
    await page.getByRole('link', { name: 'Go to the endpoint' }).click()
    await page.getByRole('heading', { name: 'Endpoint' }).waitFor()
    const webhookId = /endpoints\/(wh_[0-9a-f-]+)/.exec(page.url())![1]!
    const webhook = await api('GET', `/v1/webhooks/${webhookId}`)
    assert.deepEqual(webhook.body.data.events, ['order.created', 'payment.received'])
    shots.push({ name: 'endpoint', url: page.url() })

    // An order through the API: its delivery appears in the open deliveries page by itself.
    await page.goto(`${base}/deliveries`)
    await page.getByText('No deliveries match').waitFor()
    const order = (await api('POST', '/v1/orders', {
      customer: { firstName: 'Solveig', lastName: 'Haugen', email: 'solveig@example.com' },
      items: [{ description: 'Glacier walk', quantity: 2, unitPrice: 89 }], currency: 'EUR', travelDate: '2027-07-01',
    })).body.data
    const row = page.locator('tr[data-delivery]', { hasText: 'order.created' })
    await row.getByText('delivered').waitFor({ timeout: 15_000 })
    const [received] = await good.waitFor(1)
    assert.equal(received!.headers['x-webhook-signature'], signPayload(secret, received!.body), 'signed with the secret the page showed')
    const standard = { 'webhook-id': String(received!.headers['webhook-id']), 'webhook-timestamp': String(received!.headers['webhook-timestamp']), 'webhook-signature': String(received!.headers['webhook-signature']) }
    assert.doesNotThrow(() => new Webhook(secret).verify(received!.body, standard), 'the Standard Webhooks library takes the secret as shown')
    shots.push({ name: 'deliveries', url: page.url() })
    await row.getByRole('link', { name: 'order.created' }).click()
    const payload = page.getByLabel('Payload')
    await payload.waitFor()
    const shown = JSON.parse((await payload.textContent()) ?? '')
    assert.deepEqual(shown, JSON.parse(received!.body), 'the payload shown is the body received')
    assert.equal(shown.data.id, order.id)
    shots.push({ name: 'delivery', url: page.url() })

    // A failing endpoint's delivery, retried from the page once the receiver is back.
    await page.goto(`${base}/endpoints/new`)
    await page.getByLabel('URL').fill(`${flaky.url}/flaky`)
    await page.locator('input[name=event][value="order.created"]').check()
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    await page.locator('input[data-secret]').waitFor()
    const second = (await api('POST', '/v1/orders', {
      customer: { firstName: 'Ingrid', lastName: 'Dahl', email: 'ingrid@example.com' }, items: [{ description: 'Kayak day', quantity: 1, unitPrice: 120 }], currency: 'EUR',
    })).body.data
    await flaky.waitFor(1)
    await page.goto(`${base}/deliveries?status=failed`)
    const failedRow = page.locator('tr[data-delivery]', { hasText: 'flaky' })
    await failedRow.getByText('failed').waitFor({ timeout: 15_000 })
    await failedRow.getByRole('link', { name: 'order.created' }).click()
    await page.locator('li[data-attempt="1"]').getByText('500').waitFor()
    failing = false
    await page.getByRole('button', { name: 'Retry now' }).click()
    await page.locator('li[data-attempt="2"]').getByText('200').waitFor({ timeout: 15_000 })
    await page.locator('.page-head').getByText('delivered').waitFor()
    assert.equal(flaky.requests.length, 2)
    assert.equal(JSON.parse(flaky.requests[1]!.body).data.id, second.id)

    // A test event from the endpoint page.
    await page.goto(`${base}/endpoints/${webhookId}`)
    await page.getByLabel('Event').selectOption('payment.received')
    await page.getByRole('button', { name: 'Send test event' }).click()
    await page.getByText(/Test payment.received queued/).waitFor()
    const test = await until('the test event', () => good.requests.find((r) => JSON.parse(r.body).event === 'payment.received'))
    assert.equal(JSON.parse(test.body).test, true)

    // The event catalog, and the overview with its figures.
    await page.goto(`${base}/event-types`)
    await page.getByRole('heading', { name: 'inquiry.created' }).waitFor()
    shots.push({ name: 'event-types', url: page.url() })
    await page.goto(`${base}/overview`)
    await until('the overview counts the attempts', async () => Number(await page.locator('[data-stat=attempts]').textContent()) >= 4, 10_000)
    shots.push({ name: 'overview', url: page.url() })

    // Revoking the key in the page: the API answers 401 at once.
    await page.goto(`${base}/keys`)
    await page.locator('tr[data-key]', { hasText: 'booking site' }).getByRole('button', { name: 'Revoke' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click()
    await page.locator('tr[data-key]', { hasText: 'booking site' }).getByText('Revoked').waitFor()
    assert.equal((await api('GET', '/v1/orders')).status, 401)

    assert.deepEqual(watched.problems, [])
    assert.deepEqual(watched.dialogs, [])
    await context.close()
  })

  test('a tenant link sees its own tenant only', async () => {
    const a = await runJson(['tenants', 'create', '--db', db, '--name', 'Aurora Coaches'])
    const b = await runJson(['tenants', 'create', '--db', db, '--name', 'Borealis Boats'])
    for (const [t, word] of [[a, 'aurora'], [b, 'borealis']] as const) {
      const k = await runJson(['keys', 'create', '--db', db, '--tenant', t.id])
      const api = apiClient(serve.url, k.key)
      assert.equal((await api('POST', '/v1/webhooks', { url: `${good.url}/${word}-hook`, events: ['order.created'], secret: `${word}-secret-0123456789` })).status, 201)
      assert.equal((await api('POST', '/v1/orders', { customer: { firstName: `${word}-traveller`, lastName: 'Test', email: `${word}@example.com` }, items: [{ description: `${word} trip`, quantity: 1, unitPrice: 10 }], currency: 'EUR' })).status, 201)
    }
    await until('both deliveries', () => good.requests.filter((r) => /aurora|borealis/.test(r.url)).length >= 2)
    const { context, page, watched } = await open(await link(['--tenant', a.id]))
    await page.waitForURL(`**/dashboard/t/${a.id}/overview`)
    assert.equal(await page.locator('.tenant-name').textContent(), 'Aurora Coaches')
    assert.equal(await page.getByRole('link', { name: 'Tenants' }).count(), 0, 'no tenants page for a tenant')
    // Keyboard: the first Tab reaches "Skip to content", which moves focus to the page; the sections follow in order.
    await page.keyboard.press('Tab')
    assert.equal(await page.evaluate('document.activeElement.textContent'), 'Skip to content')
    await page.keyboard.press('Enter')
    assert.equal(await page.evaluate('document.activeElement.id'), 'main')
    await page.goto(`${serve.url}/dashboard/t/${a.id}/overview`)
    // Tab only once the page has rendered: a Tab while it still says "Loading…" lands on the document.
    await page.getByRole('link', { name: 'API keys' }).waitFor()
    const order: string[] = []
    for (let i = 0; i < 14 && !order.includes('API keys'); i++) {
      await page.keyboard.press('Tab')
      order.push(String(await page.evaluate('document.activeElement.textContent')))
    }
    const sections = ['Overview', 'Endpoints', 'Deliveries', 'Events', 'Event catalog', 'API keys']
    assert.deepEqual(order.filter((t) => sections.includes(t)), sections)
    const seen: string[] = []
    // (The Events page holds its stream open, so the network is never idle there: test/browser/events-page.test.ts.)
    for (const p of ['overview', 'endpoints', 'deliveries', 'keys', 'event-types']) {
      await page.goto(`${serve.url}/dashboard/t/${a.id}/${p}`)
      await page.getByRole('heading', { level: 1 }).waitFor()
      await page.waitForLoadState('networkidle')
      seen.push(await page.content())
    }
    await page.goto(`${serve.url}/dashboard/t/${a.id}/deliveries`)
    await page.locator('tr[data-delivery] a').first().click()
    await page.getByLabel('Payload').waitFor()
    seen.push(await page.content())
    const all = seen.join('\n')
    assert.match(all, /aurora-hook/)
    assert.match(all, /aurora-traveller/)
    assert.doesNotMatch(all, /borealis/i, 'nothing of the other tenant')
    // Another tenant's address sends it back to its own; the API refuses what the page would not show.
    await page.goto(`${serve.url}/dashboard/t/${b.id}/endpoints`)
    await page.waitForURL(`**/dashboard/t/${a.id}/overview`)
    const tenants = await page.evaluate(async () => (await fetch('/v1/admin/tenants', { headers: { 'x-requested-with': 'travelops-dashboard' } })).status)
    assert.equal(tenants, 403)
    const other = await page.evaluate(async (id) => (await fetch('/v1/orders', { headers: { 'x-requested-with': 'travelops-dashboard', 'x-travelops-tenant': id } })).json(), b.id) as { data: { customer: { firstName: string } }[] }
    assert.ok(other.data.length > 0)
    assert.ok(other.data.every((o) => o.customer.firstName === 'aurora-traveller'))
    assert.deepEqual(watched.problems, [])
    await context.close()
  })

  test('a used or expired link is refused; signing out ends the session on the server', async () => {
    const url = await link()
    const first = await open(url)
    await first.page.waitForURL('**/dashboard/tenants')
    const cookies = await first.context.cookies()
    const session = cookies.find((c) => c.name === 'travelops_session')!
    assert.equal(session.httpOnly, true)
    assert.equal(session.sameSite, 'Strict')
    assert.equal(await first.page.evaluate('document.cookie'), '', 'the session is not readable by scripts')

    const again = await open(url)
    await again.page.getByText(/already been used/).waitFor()
    await again.page.getByRole('heading', { name: 'Could not sign you in' }).waitFor()
    await again.context.close()

    const short = await link(['--expires-in', '1s'])
    await new Promise((r) => setTimeout(r, 1500))
    const late = await open(short)
    await late.page.getByText(/expired/).waitFor()
    await late.context.close()

    const call = (cookie: string) => fetch(`${serve.url}/v1/admin/tenants`, { headers: { cookie, 'x-requested-with': 'travelops-dashboard' } }).then((r) => r.status)
    assert.equal(await call(`travelops_session=${session.value}`), 200)
    await first.page.getByRole('button', { name: 'Sign out' }).click()
    await first.page.getByRole('heading', { name: 'You are signed out' }).waitFor()
    assert.equal(await call(`travelops_session=${session.value}`), 401, 'the old cookie no longer works anywhere')
    await first.context.close()
  })

  test('another site cannot act with the session: a cross-origin form POST and fetch are refused', async () => {
    const { context, page } = await open(await link())
    await page.waitForURL('**/dashboard/tenants')
    const before = (await runJson(['tenants', 'list', '--db', db])).length
    // A page of another origin on the same host (another port): the browser does send the cookie along.
    const evil: Server = createServer((req, res) => {
      res.setHeader('content-type', 'text/html')
      res.end(req.url === '/form'
        ? `<!doctype html><form id=f method=POST action="${serve.url}/v1/admin/tenants" enctype="text/plain">`
          + `<input name='{"name":"evil","x":"' value='"}'></form><script>document.getElementById('f').submit()</script>`
        : '<!doctype html><title>another site</title>')
    })
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r))
    const evilUrl = `http://127.0.0.1:${(evil.address() as { port: number }).port}`
    try {
      const formPage = await context.newPage()
      const answer = formPage.waitForResponse((r) => r.url().includes('/v1/admin/tenants'))
      await formPage.goto(`${evilUrl}/form`)
      const refused = await answer
      assert.equal(refused.status(), 403)
      assert.ok((await refused.request().allHeaders()).cookie?.includes('travelops_session='), 'the browser did send the session cookie')
      const fetchPage = await context.newPage()
      await fetchPage.goto(`${evilUrl}/`)
      const outcome = await fetchPage.evaluate(async (target) => {
        const results: string[] = []
        for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/json', 'x-requested-with': 'travelops-dashboard' }]) {
          try {
            const r = await fetch(target, { method: 'POST', credentials: 'include', headers, body: '{"name":"evil"}' })
            results.push(`status ${r.status}`)
          } catch (err) {
            results.push(`blocked: ${(err as Error).name}`)
          }
        }
        return results
      }, `${serve.url}/v1/admin/tenants`)
      assert.deepEqual(outcome, ['blocked: TypeError', 'blocked: TypeError'], 'no answer reaches the other site')
    } finally {
      await new Promise((r) => evil.close(r))
    }
    const names = (await runJson(['tenants', 'list', '--db', db])).map((t: { name: string }) => t.name)
    assert.equal(names.length, before)
    assert.ok(!names.includes('evil'))
    await context.close()
  })

  test('stored markup is shown as text and runs nothing', async () => {
    const t = await runJson(['tenants', 'create', '--db', db, '--name', XSS])
    const k = await runJson(['keys', 'create', '--db', db, '--tenant', t.id, '--name', XSS])
    const api = apiClient(serve.url, k.key)
    const webhook = await api('POST', '/v1/webhooks', { url: `${good.url}/x?q=${XSS}`, events: ['*'], secret: 'xss-secret-0123456789' })
    assert.equal(webhook.status, 201, JSON.stringify(webhook.body))
    const order = await api('POST', '/v1/orders', { customer: { firstName: XSS, lastName: XSS, email: 'xss@example.com' }, items: [{ description: XSS, quantity: 1, unitPrice: 1 }], currency: 'EUR', notes: XSS })
    assert.equal(order.status, 201, JSON.stringify(order.body))
    const { context, page, watched } = await open(await link())
    await page.waitForURL('**/dashboard/tenants')
    await page.getByRole('link', { name: XSS }).first().waitFor()
    await page.goto(`${serve.url}/dashboard/t/${t.id}/keys`)
    await page.getByText(XSS, { exact: true }).first().waitFor()
    await page.goto(`${serve.url}/dashboard/t/${t.id}/endpoints`)
    await page.getByRole('link', { name: /\/x\?q=/ }).click()
    await page.getByRole('heading', { name: 'Endpoint' }).waitFor()
    assert.match((await page.locator('.page-head').textContent()) ?? '', /<img src=x onerror=alert\(1\)>/)
    // A header name with markup is refused by the API; the page shows the refusal as text.
    await page.getByRole('button', { name: 'Edit' }).click()
    await page.getByRole('button', { name: 'Replace them' }).click()
    await page.getByRole('button', { name: 'Add a header' }).click()
    await page.getByLabel('Header 1 name').fill(XSS)
    await page.getByLabel('Header 1 value').fill(XSS)
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('alert').filter({ hasText: /header/i }).waitFor()
    await page.goto(`${serve.url}/dashboard/t/${t.id}/deliveries`)
    await page.locator('tr[data-delivery] a').first().click()
    await page.getByLabel('Payload').waitFor()
    assert.match((await page.getByLabel('Payload').textContent()) ?? '', /<img src=x onerror=alert\(1\)>/)
    assert.equal(await page.locator('img[src=x]').count(), 0, 'no element was made from stored text')
    assert.deepEqual(watched.dialogs, [], 'nothing ran')
    assert.deepEqual(watched.problems, [])
    await context.close()
  })

  test('a filtered deliveries page that stopped at the scan budget says so, and Older finds what lies further back', async () => {
    const t = await runJson(['tenants', 'create', '--db', db, '--name', 'Glacier Tours'])
    const k = await runJson(['keys', 'create', '--db', db, '--tenant', t.id])
    const webhook = await apiClient(serve.url, k.key)('POST', '/v1/webhooks', { url: `${good.url}/glacier`, events: ['payment.refunded'], secret: 'glacier-secret-0123456789' })
    assert.equal(webhook.status, 201)
    // More finished deliveries than a page looks at (SCAN_BUDGET), written beside serve as the CLI writes; the oldest one failed.
    const sqlite = openSqlite(db)
    try {
      // Inside the retention period: serve prunes older finished deliveries (30 days), the failed one among the first.
      const at = new Date(Date.now() - 60_000).toISOString()
      const id = (prefix: string, i: number) => `${prefix}_00000000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`
      sqlite.transaction(() => {
        sqlite.prepare('INSERT INTO events (id, tenant_id, name, payload, created_at) VALUES (?, ?, ?, ?, ?)').run(id('evt', 1), t.id, 'payment.refunded', '{"data":{}}', at)
        const insert = sqlite.prepare(`INSERT INTO deliveries (id, tenant_id, webhook_id, event_id, event, status, attempts, retries, response_code, created_at, delivered_at, last_attempt_at, manual)
          VALUES (?, ?, ?, ?, 'payment.refunded', ?, 1, 0, ?, ?, ?, ?, 0)`)
        for (let i = 1; i <= SCAN_BUDGET + 1_000; i++) insert.run(id('del', i), t.id, webhook.body.data.id, id('evt', 1), i === 1 ? 'failed' : 'delivered', i === 1 ? 500 : 200, at, at, at)
      })()
    } finally {
      sqlite.close()
    }
    const { context, page, watched } = await open(await link(['--tenant', t.id]))
    await page.waitForURL(`**/dashboard/t/${t.id}/overview`)
    await page.goto(`${serve.url}/dashboard/t/${t.id}/deliveries?status=failed`)
    await page.getByText('None among the deliveries looked at').waitFor()
    await page.getByRole('button', { name: 'Older' }).click()
    await page.locator('tr[data-delivery]').first().waitFor()
    assert.equal(await page.locator('tr[data-delivery]').count(), 1)
    assert.equal(await page.getByRole('button', { name: 'Older' }).isDisabled(), true)
    assert.deepEqual(watched.problems, [])
    await context.close()
  })

  test('a list slower than its refresh is shown, and is not asked for again while it is on its way', async () => {
    const t = await runJson(['tenants', 'create', '--db', db, '--name', 'Slow Fjords'])
    const k = await runJson(['keys', 'create', '--db', db, '--tenant', t.id])
    const api = apiClient(serve.url, k.key)
    const webhook = await api('POST', '/v1/webhooks', { url: `${good.url}/slow`, events: ['order.created'] })
    assert.equal(webhook.status, 201)
    assert.equal((await api('POST', `/v1/webhooks/${webhook.body.data.id}/test`)).status, 202)
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    await context.clock.install()
    const { page, watched } = await newWatchedPage(context)
    // The deliveries list is held until the test lets it go: a list slower than the page's 3 s refresh.
    const asked: string[] = []
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let first!: () => void
    const firstAsked = new Promise<void>((resolve) => (first = resolve))
    await page.route((url) => url.pathname === '/v1/webhooks/deliveries', async (route) => {
      asked.push(route.request().url())
      first()
      await released
      await route.continue()
    })
    await page.goto(await link(['--tenant', t.id]))
    await page.waitForURL(`**/dashboard/t/${t.id}/overview`)
    await page.goto(`${serve.url}/dashboard/t/${t.id}/deliveries`)
    await firstAsked
    await page.clock.runFor(10_000)
    assert.equal(asked.length, 1, 'no refresh while the list is on its way')
    release()
    await page.locator('tr[data-delivery]').first().waitFor()
    // Refreshing goes on, 3 s after the answer.
    await page.clock.runFor(3_000)
    await until('a refresh after the answer', async () => asked.length === 2)
    assert.deepEqual(watched.problems, [])
    await context.close()
  })

  test('screenshots of every page: desktop and phone, light and dark', async () => {
    assert.ok(shots.length >= 8, `pages seen: ${shots.map((s) => s.name).join(', ')}`)
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(await link())
    await page.waitForURL('**/dashboard/tenants')
    await page.close()
    const files = await screenshotAll(context, shots)
    assert.equal(files.length, shots.length * 4)
    await context.close()
    if (process.env.TRAVELOPS_UPDATE_DOCS === '1') {
      mkdirSync('docs', { recursive: true })
      for (const name of ['overview', 'delivery']) copyFileSync(files.find((f) => f.includes(`/${name}-desktop-light`))!, `docs/dashboard-${name}.png`)
    }
  })
})
