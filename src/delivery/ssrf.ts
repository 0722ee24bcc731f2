import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * Which webhook targets are allowed (CONTRACT §7). Only ordinary public unicast addresses
 * pass: IPv4 whose ipaddr.js range is `unicast`, IPv6 global unicast (2000::/3). IPv6 forms
 * that embed an IPv4 address (mapped, RFC 6145, NAT64 64:ff9b::/96) are judged as that IPv4.
 */

const _GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3')
const _NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96')

/** The name of the forbidden range `ip` falls in (e.g. `loopback`, `private`), or null if allowed. */
export function forbiddenRange(ip: string): string | null {
  if (isIP(ip) === 0) return 'invalid'
  const addr = ipaddr.parse(ip)
  if (addr.kind() === 'ipv4') return _v4Range(addr as ipaddr.IPv4)
  const v6 = addr as ipaddr.IPv6
  const range = v6.range()
  if (range === 'ipv4Mapped' || range === 'rfc6145' || (range === 'rfc6052' && v6.match(_NAT64_WELL_KNOWN))) {
    return _v4Range(_embeddedV4(v6))
  }
  if (range !== 'unicast') return range
  return v6.match(_GLOBAL_UNICAST_V6) ? null : 'reserved'
}

/** True for loopback, private, link-local, unique-local, multicast, unspecified, CGNAT, reserved, … */
export function isForbiddenAddress(ip: string): boolean {
  return forbiddenRange(ip) !== null
}

/** The error text for a refused target address. */
export function refusedAddressMessage(ip: string): string {
  const range = forbiddenRange(ip) ?? 'forbidden'
  return `target address ${ip} is not allowed (${range}); start the server with --allow-private-targets to permit it`
}

export type TargetCheck = { ok: true } | { ok: false; reason: string }
export type LookupAll = (hostname: string) => Promise<readonly { address: string }[]>
export type TargetCheckOptions = {
  allowPrivate: boolean
  /** Resolves a host name to all its addresses; default `dns.lookup(name, { all: true })`. */
  lookup?: LookupAll
}

/**
 * Create/update-time check of a webhook URL. A host name that does not resolve (yet) is
 * accepted; a name with ANY forbidden address is refused. The sender checks again on
 * every attempt against the address it actually connects to.
 */
export async function checkTargetUrl(url: string, options: TargetCheckOptions): Promise<TargetCheck> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return { ok: false, reason: 'url is not a valid absolute URL' }
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { ok: false, reason: 'url must use http or https' }
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return { ok: false, reason: 'url must not contain credentials' }
  }
  if (options.allowPrivate) return { ok: true }

  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return { ok: false, reason: `url host ${host} is not allowed (loopback); start the server with --allow-private-targets to permit it` }
  }
  if (isIP(host) !== 0) return _judge([host])

  let addresses: readonly { address: string }[]
  try {
    addresses = await (options.lookup ?? _lookupAll)(host)
  } catch {
    return { ok: true } // does not resolve yet: accepted, checked again at delivery time
  }
  return _judge(addresses.map((a) => a.address))
}

function _judge(addresses: string[]): TargetCheck {
  const bad = addresses.find(isForbiddenAddress)
  return bad === undefined ? { ok: true } : { ok: false, reason: refusedAddressMessage(bad) }
}

function _v4Range(addr: ipaddr.IPv4): string | null {
  const range = addr.range()
  return range === 'unicast' ? null : range
}

function _embeddedV4(addr: ipaddr.IPv6): ipaddr.IPv4 {
  const [, , , , , , hi = 0, lo = 0] = addr.parts
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff])
}

function _lookupAll(hostname: string): Promise<readonly { address: string }[]> {
  return dnsLookup(hostname, { all: true, verbatim: true })
}
