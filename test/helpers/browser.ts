import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'

/** Debian's chromium (installed by .ci/run); TRAVELOPS_CHROMIUM names another binary. Nothing is downloaded. */
export const CHROMIUM = process.env.TRAVELOPS_CHROMIUM ?? '/usr/bin/chromium'
export const hasChromium = () => existsSync(CHROMIUM)

/** Where the tests write screenshots (ignored by git). */
export const SCREENSHOTS = fileURLToPath(new URL('../../test-output/screenshots/', import.meta.url))

/**
 * Headless Chromium with a fresh profile (playwright gives each launch a new temporary user-data-dir).
 * A missing binary is refused here: playwright would make its artifacts and profile directories
 * in the temporary directory first, and leave them there when it found no browser.
 */
export async function launchChromium(executablePath = CHROMIUM): Promise<Browser> {
  if (!existsSync(executablePath)) throw new Error(`no Chromium at ${executablePath}: install Debian's chromium package (or set TRAVELOPS_CHROMIUM to a Chromium binary)`)
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-dev-shm-usage'],
  })
}

/**
 * Everything a page does that it should not: a script error, an error in the console, a
 * Content-Security-Policy violation, a dialog (what an injected `alert(1)` would open).
 */
export interface Watched {
  problems: string[]
  dialogs: string[]
}

export async function newWatchedPage(context: BrowserContext): Promise<{ page: Page; watched: Watched }> {
  const watched: Watched = { problems: [], dialogs: [] }
  const page = await context.newPage()
  await page.addInitScript(`document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI))`)
  page.on('pageerror', (err) => watched.problems.push(`page error: ${err.message}`))
  page.on('console', (m) => {
    // A refused request (401 after signing out, a 4xx shown on the page) is logged by the browser itself; those are expected.
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) watched.problems.push(`console: ${m.text()}`)
  })
  page.on('dialog', (d) => {
    watched.dialogs.push(d.message())
    void d.dismiss()
  })
  return { page, watched }
}

export type Shot = { name: string; url: string }

/** Every page at desktop and phone width, light and dark, into SCREENSHOTS/<name>-<width>-<scheme>.png. */
export async function screenshotAll(context: BrowserContext, shots: readonly Shot[]): Promise<string[]> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const written: string[] = []
  const page = await context.newPage()
  for (const [width, viewport] of [['desktop', { width: 1280, height: 860 }], ['phone', { width: 390, height: 844 }]] as const) {
    await page.setViewportSize(viewport)
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      for (const shot of shots) {
        await page.goto(shot.url)
        await page.waitForSelector('main h1')
        await page.waitForLoadState('networkidle')
        const file = join(SCREENSHOTS, `${shot.name}-${width}-${scheme}.png`)
        await page.screenshot({ path: file, fullPage: true })
        written.push(file)
      }
    }
  }
  await page.close()
  return written
}

/** The whole page into SCREENSHOTS/<name>.png; returns the file. */
export async function screenshotPage(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const file = join(SCREENSHOTS, `${name}.png`)
  await page.screenshot({ path: file, fullPage: true })
  return file
}
