import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** The API reference page's files by name (`assets/…`, named by their content's hash). Bodies are UTF-8 text. */
export type BuiltReference = Record<string, { type: string; body: string }>

/** Redoc's sidebar footer shows Redocly's logo from their CDN; the page loads nothing from another origin. */
const FOREIGN_LOGO = '"https://cdn.redoc.ly/redoc/logo-mini.svg"'
const BLANK_IMAGE = '"data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E"'

/**
 * Starts Redoc on the page: the style nonce comes from this script's own `nonce` attribute (the
 * page's CSP names it for styles only). Search is off: Redoc runs it in a worker made from a
 * blob: URL, which `script-src 'self'` refuses.
 */
const START = `'use strict';
(function () {
  var nonce = document.currentScript.nonce
  Redoc.init('/v1/openapi.json', { nonce: nonce, disableSearch: true, expandResponses: '200,201', pathInMiddlePanel: true }, document.getElementById('redoc'))
})()
`

/**
 * The API reference page (CONTRACT §16): Redoc's standalone bundle from node_modules (the
 * `redoc` package) and the script that starts it. The checkout reads them on the first /docs
 * request; scripts/package.ts embeds them as __TRAVELOPS_REFERENCE__.
 */
export function buildReference(root: string): BuiltReference {
  const redoc = readFileSync(join(root, 'node_modules', 'redoc', 'bundles', 'redoc.standalone.js'), 'utf8')
  if (!redoc.includes(FOREIGN_LOGO)) throw new Error(`redoc.standalone.js no longer names ${FOREIGN_LOGO}: check what it loads from other origins`)
  const files: BuiltReference = {}
  for (const [name, body] of [['redoc', redoc.replaceAll(FOREIGN_LOGO, BLANK_IMAGE)], ['start', START]] as const) {
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 12)
    files[`assets/${name}-${hash}.js`] = { type: 'text/javascript; charset=utf-8', body }
  }
  return files
}
