import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { launchChromium } from '../helpers/browser.ts'
import { checkDocsPage } from '../helpers/docs-page.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'

// CONTRACT §16: /docs renders the served OpenAPI document in Chromium under the dashboard's CSP
// rules (scripts from 'self' only, nothing from another origin).

describe('the API reference page', () => {
  let app: TestApp
  let browser: Browser
  before(async () => {
    app = await startTestApp()
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await app?.close()
  })

  test('renders the operations with no CSP violation and no request to another origin', async () => {
    const requested = await checkDocsPage(browser, app.url)
    assert.ok(requested.some((u) => /\/docs\/assets\/redoc-[0-9a-f]{12}\.js$/.test(u)), requested.join('\n'))
  })

  test('the page forbids inline scripts and other origins; its scripts are cached for ever', async () => {
    const page = await fetch(`${app.url}/docs`)
    const csp = page.headers.get('content-security-policy')!
    assert.match(csp, /script-src 'self'(;|$)/)
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:|\*/)
    assert.match(csp, /style-src 'self' 'nonce-[A-Za-z0-9+/=]{24}'/)
    assert.equal(page.headers.get('x-frame-options'), 'DENY')
    const html = await page.text()
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)/, 'an inline script')
    const second = await fetch(`${app.url}/docs`)
    assert.notEqual(second.headers.get('content-security-policy'), csp, 'the nonce is new on every answer')
    for (const src of html.matchAll(/<script src="([^"]+)"/g)) {
      const r = await fetch(`${app.url}${src[1]}`)
      assert.equal(r.status, 200, src[1])
      assert.equal(r.headers.get('cache-control'), 'public, max-age=31536000, immutable')
      assert.match(r.headers.get('content-type')!, /^text\/javascript/)
      await r.arrayBuffer()
    }
    assert.equal((await fetch(`${app.url}/docs/assets/nothing.js`)).status, 404)
    assert.equal((await fetch(`${app.url}/docs`, { method: 'POST' })).status, 405)
  })
})
