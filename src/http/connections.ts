import { readFileSync } from 'node:fs'
import type { Server } from 'node:http'

// CONTRACT §16, connections: what a client that sends nothing, or sends it slowly, may hold.

/** A connection that has not sent a complete request head this long is answered 408 and closed. */
export const HEADERS_TIMEOUT_MS = 10_000
/** A connection idle between two requests this long is closed (Node adds a 1 s buffer past the advertised timeout). */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000
/** A whole request, head and body, must arrive within this (docs/decisions/0038-connection-bounds.md). */
export const REQUEST_TIMEOUT_MS = 30_000
/** How often Node looks for requests past those timeouts (its default, 30 s, let them live 30 s longer). */
const _CHECK_EVERY_MS = 1_000
/** File descriptors kept for everything but incoming connections once the limit is large (the database, deliveries, logs). */
const _ROOM = 1_024
/** The open-file limit assumed where /proc/self/limits cannot be read. */
const _FALLBACK_LIMIT = 1_024

export interface ConnectionTimeouts {
  headersMs: number
  requestMs: number
  keepAliveMs: number
}

/**
 * The timeouts serve applies: §16's, unless TRAVELOPS_TEST_HTTP_TIMEOUTS (`head,request,keep-alive`
 * in ms) shortens them. That variable is for the tests alone (docs/testing.md): they watch the
 * real timeouts close real connections without waiting 10 and 30 s. A malformed value stops
 * serve rather than be ignored.
 */
export function connectionTimeouts(env: NodeJS.ProcessEnv = process.env): ConnectionTimeouts {
  const given = env.TRAVELOPS_TEST_HTTP_TIMEOUTS
  if (given === undefined) return { headersMs: HEADERS_TIMEOUT_MS, requestMs: REQUEST_TIMEOUT_MS, keepAliveMs: KEEP_ALIVE_TIMEOUT_MS }
  const ms = given.split(',').map((s) => (/^\d+$/.test(s.trim()) ? Number(s) : NaN))
  const [headersMs, requestMs, keepAliveMs] = ms as [number, number, number]
  // Node closes a request past requestTimeout whatever its head did: the head's must be the shorter.
  if (ms.length !== 3 || ms.some((m) => !(m > 0)) || headersMs >= requestMs) {
    throw new Error(`TRAVELOPS_TEST_HTTP_TIMEOUTS must be three positive ms values, head,request,keep-alive, the head's below the request's; got ${given}`)
  }
  return { headersMs, requestMs, keepAliveMs }
}

/**
 * The default bound on open connections: the process's open-file limit less room for the
 * database, deliveries and the rest (1,024 descriptors, or half the limit when it is small).
 * Node raises its soft limit to the hard one at start, so /proc/self/limits read here is the
 * limit that applies; `limits` (the file's text) is for tests.
 */
export function defaultMaxConnections(limits?: string): number {
  const limit = openFileLimit(limits) ?? _FALLBACK_LIMIT
  return Math.max(1, Math.floor(limit / 2), limit - _ROOM)
}

/** The soft open-file limit from /proc/self/limits (Linux), or null where it cannot be read. */
export function openFileLimit(limits?: string): number | null {
  let text = limits
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'latin1')
    } catch {
      return null
    }
  }
  const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(text)
  if (!m) return null
  return m[1] === 'unlimited' ? 1_048_576 : Number(m[1])
}

/**
 * Applies §16's bounds to a listening server: the head, request and keep-alive timeouts, checked
 * every second, and at most `maxConnections` open connections (Node closes any past that at once,
 * before reading a byte; those already open keep being answered).
 */
export function boundConnections(server: Server, maxConnections: number, timeouts = connectionTimeouts()): void {
  server.headersTimeout = timeouts.headersMs
  server.requestTimeout = timeouts.requestMs
  server.keepAliveTimeout = timeouts.keepAliveMs
  server.maxConnections = maxConnections
  // Node reads connectionsCheckingInterval when the server starts listening, and listhen creates
  // and starts the server in one call: its 'listening' handler is run again to start the check
  // at the new interval (it clears the one it started).
  ;(server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = _CHECK_EVERY_MS
  const setup = server.listeners('listening').find((f) => f.name === 'setupConnectionsTracking')
  if (!setup) throw new Error('this Node.js starts no connection check on listening: the request timeouts cannot be bounded')
  setup.call(server)
}
