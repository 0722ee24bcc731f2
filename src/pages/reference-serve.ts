import type { H3Event } from 'h3'
import { FastResponse } from 'srvx'
import { randomBytes } from 'node:crypto'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import type { AppDeps } from '../context.ts'
import { newId } from '../lib/ids.ts'
import { DASHBOARD_CSP } from './dashboard-serve.ts'
import { NO_FRAMING } from '../http/security-headers.ts'
import type { BuiltReference } from './reference-build.ts'

declare const __TRAVELOPS_REFERENCE__: BuiltReference | undefined

/**
 * The <style> elements Redoc's bundle makes as it loads, before it is given the nonce: an empty
 * one and its scroll bars' sheet. Their hashes change with the bundle; test/browser/docs.test.ts
 * (Chromium) then sees the violation.
 */
const LOAD_STYLE_HASHES = ["'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='", "'sha256-QMIg+bpjm3JdElJ388KYke01izlUW0UoNOeKjpMxdgc='"]

interface File { type: string; body: Buffer; gzip: Buffer }
interface Loaded { files: Map<string, File>; redoc: string; start: string }

let _loaded: Promise<Loaded> | undefined

/**
 * Everything under /docs: the page, and its two scripts (hashed names, cached for a year,
 * gzipped). The dashboard's CSP (§14), except that styles may also come from <style> elements
 * carrying this answer's nonce (Redoc's styled-components) and from the two hashed above.
 */
export async function serveReference(event: H3Event, deps: AppDeps): Promise<Response> {
  const method = event.req.method
  if (method !== 'GET' && method !== 'HEAD') {
    return _json(405, 'method_not_allowed', `Method ${method} is not allowed on ${event.url.pathname}`, { allow: 'GET, HEAD' })
  }
  let loaded: Loaded
  try {
    loaded = await _load()
  } catch (err) {
    _loaded = undefined
    deps.logger.error('the API reference could not be loaded', { error: String(err) })
    return _json(500, 'internal_error', 'The API reference could not be loaded; see the server log')
  }
  const path = event.url.pathname
  if (path === '/docs') {
    const nonce = randomBytes(16).toString('base64')
    const body = Buffer.from(_page(loaded, nonce))
    return new FastResponse(method === 'HEAD' ? null : body, {
      status: 200,
      headers: { ..._pageHeaders(nonce), 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-length': String(body.length) },
    })
  }
  const file = loaded.files.get(path.slice('/docs/'.length))
  if (!file) return _json(404, 'not_found', `No API reference file ${path}`)
  const zipped = /\bgzip\b/.test(event.req.headers.get('accept-encoding') ?? '')
  const body = zipped ? file.gzip : file.body
  return new FastResponse(method === 'HEAD' ? null : body, {
    status: 200,
    headers: {
      ..._pageHeaders(), 'content-type': file.type, 'cache-control': 'public, max-age=31536000, immutable', 'content-length': String(body.length),
      vary: 'accept-encoding', ...(zipped ? { 'content-encoding': 'gzip' } : {}),
    },
  })
}

/** The executable carries the files; a checkout reads them once (the module's path is not a literal, so the bundle leaves it out). */
function _load(): Promise<Loaded> {
  return (_loaded ??= (async () => {
    let built: BuiltReference
    if (typeof __TRAVELOPS_REFERENCE__ !== 'undefined') built = __TRAVELOPS_REFERENCE__
    else {
      const builder = './reference-build.ts'
      const { buildReference } = (await import(builder)) as typeof import('./reference-build.ts')
      built = buildReference(join(dirname(fileURLToPath(import.meta.url)), '..', '..'))
    }
    const files = new Map<string, File>()
    for (const [name, f] of Object.entries(built)) {
      const body = Buffer.from(f.body)
      files.set(name, { type: f.type, body, gzip: gzipSync(body, { level: 9 }) })
    }
    const named = (prefix: string) => [...files.keys()].find((n) => n.startsWith(`assets/${prefix}-`))!
    return { files, redoc: named('redoc'), start: named('start') }
  })())
}

function _page(loaded: Loaded, nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>travelops API reference</title>
</head>
<body>
<noscript>The API reference needs JavaScript. The OpenAPI document itself is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
<div id="redoc"></div>
<script src="/docs/${loaded.redoc}"></script>
<script src="/docs/${loaded.start}" nonce="${nonce}"></script>
</body>
</html>
`
}

function _pageHeaders(nonce?: string): Record<string, string> {
  const styles = ["style-src 'self'", ...(nonce ? [`'nonce-${nonce}'`, ...LOAD_STYLE_HASHES] : [])].join(' ')
  return {
    'content-security-policy': DASHBOARD_CSP.replace("style-src 'self'", styles),
    ...NO_FRAMING,
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
  }
}

function _json(status: number, code: string, message: string, extra: Record<string, string> = {}): Response {
  return new FastResponse(JSON.stringify({ error: { code, message, details: [], request_id: newId('req') } }), {
    status, headers: { ..._pageHeaders(), 'content-type': 'application/json; charset=utf-8', ...extra },
  })
}
