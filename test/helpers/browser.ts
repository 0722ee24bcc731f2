import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'

// The tests' Chromium, nothing downloaded: TRAVELOPS_CHROMIUM when set (that binary and no other),
// else Debian's chromium (installed by .ci/run), else the one npm brought (@sparticuz/chromium, a
// headless shell with the NSS, NSPR and expat libraries it needs beside it), decompressed once into
// node_modules/.cache/.

/** Debian's chromium. */
export const SYSTEM_CHROMIUM = '/usr/bin/chromium'

/** Where the tests write screenshots (ignored by git). */
export const SCREENSHOTS = fileURLToPath(new URL('../../test-output/screenshots/', import.meta.url))

const _require = createRequire(import.meta.url)

/**
 * The Chromium binaries to try, in order: TRAVELOPS_CHROMIUM alone when set; else Debian's where
 * it is installed, then npm's (decompressed here on first use; not when TRAVELOPS_NPM_CHROMIUM=0).
 */
export async function chromiumCandidates(): Promise<string[]> {
  const chosen = process.env.TRAVELOPS_CHROMIUM
  if (chosen) return [chosen]
  const found = existsSync(SYSTEM_CHROMIUM) ? [SYSTEM_CHROMIUM] : []
  if (process.env.TRAVELOPS_NPM_CHROMIUM !== '0') {
    const npm = await npmChromium()
    if (npm) found.push(npm)
  }
  return found
}

/**
 * @sparticuz/chromium's binary, decompressed into node_modules/.cache/travelops-chromium-<version>/
 * (chromium, its fonts, SwiftShader, and al2023/lib: libnss3, libnspr4, libexpat, which a stock
 * Debian lacks); undefined when the package is not installed. Made in a directory of its own and
 * renamed into place, so that two runs never see half of it.
 */
export async function npmChromium(): Promise<string | undefined> {
  let pkg: string
  try {
    pkg = join(dirname(_require.resolve('@sparticuz/chromium')), '..')
  } catch {
    return undefined
  }
  const version = (JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string }).version
  const cache = fileURLToPath(new URL('../../node_modules/.cache/', import.meta.url))
  const dir = join(cache, `travelops-chromium-${version}`)
  const binary = join(dir, 'chromium')
  if (existsSync(binary)) return _withFonts(dir)
  mkdirSync(cache, { recursive: true })
  const work = mkdtempSync(join(cache, 'travelops-chromium-tmp-'))
  // inflate() writes into os.tmpdir(), which reads TMPDIR at each call.
  const before = process.env.TMPDIR
  process.env.TMPDIR = work
  try {
    const { inflate } = await import('@sparticuz/chromium')
    for (const archive of ['chromium.br', 'fonts.tar.br', 'swiftshader.tar.br', 'al2023.tar.br']) await inflate(join(pkg, 'bin', archive))
  } catch (err) {
    rmSync(work, { recursive: true, force: true })
    throw err
  } finally {
    if (before === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = before
  }
  try {
    renameSync(work, dir)
  } catch {
    rmSync(work, { recursive: true, force: true }) // another run put it there first
  }
  return _withFonts(dir)
}

/**
 * The package's fonts.conf names /tmp/fonts (where it decompresses on AWS Lambda); with no font
 * found there the headless shell aborts at the first text it draws (SkFontMgr_FontConfigInterface:
 * "Not implemented", SIGTRAP). travelops-fonts.conf names the fonts beside the binary instead.
 */
function _withFonts(dir: string): string {
  const conf = join(dir, 'travelops-fonts.conf')
  if (!existsSync(conf)) {
    writeFileSync(conf, `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${join(dir, 'fonts')}</dir>\n  <cachedir>${join(dir, 'fonts-cache')}</cachedir>\n</fontconfig>\n`)
  }
  return join(dir, 'chromium')
}

/** The environment a binary needs: npm's finds its libraries and fonts beside it. */
function _chromiumEnv(executablePath: string): Record<string, string> | undefined {
  const libs = join(dirname(executablePath), 'al2023', 'lib')
  if (!existsSync(libs)) return undefined
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
  env.LD_LIBRARY_PATH = [libs, ...(process.env.LD_LIBRARY_PATH ? [process.env.LD_LIBRARY_PATH] : [])].join(':')
  env.FONTCONFIG_FILE = join(dirname(executablePath), 'travelops-fonts.conf')
  return env
}

export type BrowserFound = { executablePath: string } | { reason: string }

/**
 * The first of chromiumCandidates() that starts (a launch, a page with text drawn), or why none did: a
 * missing binary or the first line of each one's launch error.
 */
export async function findStartingChromium(): Promise<BrowserFound> {
  const reasons: string[] = []
  let candidates: string[]
  try {
    candidates = await chromiumCandidates()
  } catch (err) {
    return { reason: `npm's Chromium could not be decompressed: ${(err as Error).message}` }
  }
  for (const path of candidates) {
    try {
      const browser = await launchChromium(path)
      try {
        // Text drawn too: a Chromium without fonts starts, then aborts at the first glyph.
        const page = await browser.newPage()
        await page.setContent('<p>travelops</p>')
        await page.screenshot()
        await page.close()
      } finally {
        await browser.close()
      }
      return { executablePath: path }
    } catch (err) {
      reasons.push(`${path}: ${_firstLines((err as Error).message)}`)
    }
  }
  if (candidates.length === 0) reasons.push(`no Chromium at ${SYSTEM_CHROMIUM} and no @sparticuz/chromium in node_modules`)
  return { reason: reasons.join('; ') }
}

const _firstLines = (message: string) => {
  // playwright's launch error carries the browser's own stderr; the line that names a missing library matters most.
  const missing = /error while loading shared libraries: [^\n]*/.exec(message)
  return missing ? missing[0] : message.split('\n').find((l) => l.trim() !== '')!.slice(0, 300)
}

/**
 * Headless Chromium with a fresh profile (playwright gives each launch a new temporary user-data-dir).
 * A missing binary is refused here: playwright would make its artifacts and profile directories
 * in the temporary directory first, and leave them there when it found no browser.
 */
export async function launchChromium(executablePath?: string): Promise<Browser> {
  const path = executablePath ?? (await chromiumCandidates())[0]
  if (!path || !existsSync(path)) throw new Error(`no Chromium at ${path ?? SYSTEM_CHROMIUM}: run npm install (@sparticuz/chromium) or install Debian's chromium package (or set TRAVELOPS_CHROMIUM to a Chromium binary)`)
  const env = _chromiumEnv(path)
  return chromium.launch({
    executablePath: path,
    headless: true,
    ...(env ? { env } : {}),
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
