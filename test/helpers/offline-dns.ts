import { isIP } from 'node:net'
import type { ResolveAll } from '../../src/delivery/guard-connect.ts'

/**
 * Name resolution for in-process test servers that never leaves the machine: IP literals
 * resolve to themselves, `localhost` to 127.0.0.1, every other name fails as unknown (the
 * machine's resolver is not on loopback, so a real lookup would send a query elsewhere).
 */
export const offlineResolve: ResolveAll = (hostname, _options, callback) => {
  const family = isIP(hostname)
  if (family) return callback(null, [{ address: hostname, family }])
  if (hostname === 'localhost') return callback(null, [{ address: '127.0.0.1', family: 4 }])
  callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname} (tests resolve no names)`), { code: 'ENOTFOUND' }), [])
}
