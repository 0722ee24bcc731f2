import assert from 'node:assert/strict'
import type { Browser } from 'playwright-core'
import { newWatchedPage } from './browser.ts'

/** How long Redoc may take to show the operations. */
const RENDER_MS = 120_000

/**
 * Opens `<base>/docs` in Chromium and checks the API reference: the operations are rendered
 * (a known operation's summary is visible), no script error, no CSP violation, and every
 * request stayed on the server's origin. Returns the same-origin URLs the page loaded.
 */
export async function checkDocsPage(browser: Browser, base: string): Promise<string[]> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
  try {
    const { page, watched } = await newWatchedPage(context)
    const origin = new URL(base).origin
    const requested: string[] = []
    page.on('request', (r) => { requested.push(r.url()) })
    const res = await page.goto(`${base}/docs`)
    assert.equal(res?.status(), 200)
    // Redoc lays out every operation of the document before it shows one: 7 s on a quiet machine,
    // over 30 s (Playwright's default) in CI's browser pass beside the PostgreSQL pass. What is
    // checked is what it shows, not how soon.
    await page.getByRole('heading', { name: 'Create an order' }).first().waitFor({ state: 'visible', timeout: RENDER_MS })
    await page.getByRole('heading', { name: 'Liveness: the database answers' }).first().waitFor({ state: 'visible', timeout: RENDER_MS })
    // Everything the page asked for has been answered: no request left that could still fail.
    await page.waitForLoadState('networkidle')
    assert.deepEqual(watched.problems, [])
    assert.deepEqual(requested.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:')), [])
    assert.ok(requested.includes(`${origin}/v1/openapi.json`), requested.join('\n'))
    return requested
  } finally {
    await context.close()
  }
}
