import { lookup as dnsLookup } from 'node:dns'
import type { LookupAddress, LookupOptions } from 'node:dns'
import { isIP } from 'node:net'
import type { LookupFunction } from 'node:net'
import type { buildConnector } from 'undici'
import { isForbiddenAddress, refusedAddressMessage } from './ssrf.ts'

/**
 * SSRF guard for outgoing webhook connections, in two layers:
 * - `guardLookup()` (for host names): forbidden addresses are dropped from the DNS answer
 *   before the socket connects; if none is left, the lookup fails with the refusal message.
 * - `guardConnector` (for every connection): an IP-literal host that is forbidden is refused
 *   without connecting, and after connecting the socket's actual `remoteAddress` is checked;
 *   a forbidden peer gets the socket destroyed before a single byte of HTTP is written.
 */

export const TARGET_REFUSED = 'ERR_TARGET_ADDRESS_REFUSED'

/** An Error with code `ERR_TARGET_ADDRESS_REFUSED` and the user-facing refusal text. */
export function targetRefusedError(ip: string): Error {
  return Object.assign(new Error(refusedAddressMessage(ip)), { code: TARGET_REFUSED })
}

/** Wraps an undici connector so that it only ever hands out sockets to allowed addresses. */
export function guardConnector(inner: buildConnector.connector): buildConnector.connector {
  return (options, callback) => {
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1')
    if (isIP(host) !== 0 && isForbiddenAddress(host)) {
      callback(targetRefusedError(host), null)
      return
    }
    inner(options, (err, socket) => {
      if (err !== null) {
        callback(err, null)
        return
      }
      const remote = socket.remoteAddress
      if (remote === undefined || isForbiddenAddress(remote)) {
        socket.destroy()
        callback(targetRefusedError(remote ?? 'unknown'), null)
        return
      }
      callback(null, socket)
    })
  }
}

export type ResolveAll = (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void

/**
 * A `net.connect` lookup that only returns allowed addresses (both `all` forms supported).
 * `resolve` defaults to `dns.lookup(hostname, { ...options, all: true })`.
 */
export function guardLookup(resolve: ResolveAll = _dnsAll): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, options, (err, addresses) => {
      if (err) {
        callback(err, '')
        return
      }
      const allowed = addresses.filter((a) => !isForbiddenAddress(a.address))
      const first = allowed[0]
      if (first === undefined) {
        callback(targetRefusedError(addresses[0]?.address ?? hostname), '')
        return
      }
      if (options.all) callback(null, allowed)
      else callback(null, first.address, first.family)
    })
  }
}

/** A `net.connect` lookup over `resolve` with no filtering (`--allow-private-targets`). */
export function plainLookup(resolve: ResolveAll): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, options, (err, addresses) => {
      const first = addresses[0]
      if (err || first === undefined) callback(err ?? Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '')
      else if (options.all) callback(null, addresses)
      else callback(null, first.address, first.family)
    })
  }
}

/** The promise form `checkTargetUrl` takes. */
export function lookupAll(resolve: ResolveAll = _dnsAll): (hostname: string) => Promise<LookupAddress[]> {
  return (hostname) => new Promise((res, rej) => resolve(hostname, { all: true }, (err, addresses) => (err ? rej(err) : res(addresses))))
}

function _dnsAll(...[hostname, options, callback]: Parameters<ResolveAll>): void {
  dnsLookup(hostname, { ...options, all: true }, callback)
}
