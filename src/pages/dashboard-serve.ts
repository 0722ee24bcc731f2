import type { H3Event } from 'h3'
import { FastResponse } from 'srvx'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import type { AppDeps } from '../context.ts'
import { newId } from '../lib/ids.ts'
import { NO_FRAMING } from '../http/security-headers.ts'
import type { BuiltDashboard } from './dashboard-build.ts'

declare const __TRAVELOPS_DASHBOARD__: BuiltDashboard | undefined

interface File {
  type: string
  body: Buffer
  /** The same bytes gzipped, for scripts and style sheets (made once, when the files are loaded). */
  gzip?: Buffer
}

/**
 * The dashboard's pages cannot run anything but our own script, load nothing from another
 * origin, and cannot be framed (CONTRACT §14).
 */
export const DASHBOARD_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'", "font-src 'self'",
  "manifest-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ')

const PAGE_HEADERS = {
  'content-security-policy': DASHBOARD_CSP,
  ...NO_FRAMING,
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
}

let _files: Promise<Map<string, File>> | undefined

/**
 * The executable carries the built files (scripts/package.ts defines __TRAVELOPS_DASHBOARD__);
 * a checkout builds them once, on the first request. The build module's path is not a literal,
 * so the executable's bundle does not pull esbuild in.
 */
function _load(): Promise<Map<string, File>> {
  return (_files ??= (async () => {
    let built: BuiltDashboard
    if (typeof __TRAVELOPS_DASHBOARD__ !== 'undefined') built = __TRAVELOPS_DASHBOARD__
    else {
      const here = dirname(fileURLToPath(import.meta.url))
      const builder = './dashboard-build.ts'
      const { buildDashboard } = (await import(builder)) as typeof import('./dashboard-build.ts')
      built = await buildDashboard(join(here, '..', '..'))
    }
    return new Map(Object.entries(built).map(([name, f]) => {
      const body = Buffer.from(f.body, 'base64')
      return [name, { type: f.type, body, gzip: /\.(js|css|svg)$/.test(name) ? gzipSync(body, { level: 9 }) : undefined }]
    }))
  })())
}

/** Answers everything under /dashboard: hashed assets (cached for a year), else the page (the script routes). */
export async function serveDashboard(event: H3Event, deps: AppDeps): Promise<Response> {
  const method = event.req.method
  if (method !== 'GET' && method !== 'HEAD') {
    return _json(405, 'method_not_allowed', `Method ${method} is not allowed on ${event.url.pathname}`, { allow: 'GET, HEAD' })
  }
  let files: Map<string, File>
  try {
    files = await _load()
  } catch (err) {
    _files = undefined
    deps.logger.error('the dashboard could not be built', { error: String(err) })
    return _json(500, 'internal_error', 'The dashboard could not be built; see the server log')
  }
  const path = event.url.pathname
  if (path.startsWith('/dashboard/assets/')) {
    const file = files.get(path.slice('/dashboard/'.length))
    if (!file) return _json(404, 'not_found', `No dashboard file ${path}`)
    const zipped = file.gzip && /\bgzip\b/.test(event.req.headers.get('accept-encoding') ?? '')
    const body = zipped ? file.gzip! : file.body
    return new FastResponse(method === 'HEAD' ? null : body, {
      status: 200,
      headers: {
        ...PAGE_HEADERS, 'content-type': file.type, 'cache-control': 'public, max-age=31536000, immutable', 'content-length': String(body.length),
        vary: 'accept-encoding', ...(zipped ? { 'content-encoding': 'gzip' } : {}),
      },
    })
  }
  const page = files.get('index.html')!
  return new FastResponse(method === 'HEAD' ? null : page.body, {
    status: 200, headers: { ...PAGE_HEADERS, 'content-type': page.type, 'cache-control': 'no-cache' },
  })
}

function _json(status: number, code: string, message: string, extra: Record<string, string> = {}): Response {
  return new FastResponse(JSON.stringify({ error: { code, message, details: [], request_id: newId('req') } }), {
    status, headers: { ...PAGE_HEADERS, 'content-type': 'application/json; charset=utf-8', ...extra },
  })
}
