import type { RequestListener, Server } from 'node:http'
import type { Server as HttpsServer } from 'node:https'
import { boundConnections, connectionTimeouts } from './connections.ts'

export interface Listening {
  server: Server | HttpsServer
  /** `http://HOST:PORT` or `https://…`, the port the one actually bound (no trailing slash). */
  url: string
}

/**
 * Listens through listhen (the client's stack) with CONTRACT §2's port rules kept exactly:
 * port 0 is any free port, and a busy port is an error — never another port. listhen finds its
 * port with get-port-please, which by default moves on to a neighbouring port when the one asked
 * is taken, and turns 0 into 3000; `random` and empty port ranges make it strict. Its own
 * extras (URL banner, QR code, tunnel, signal handling, clipboard, browser) stay off: `serve`
 * prints its one line and stops itself. The server's connections are bounded as §16 says
 * (connections.ts).
 */
export async function listenStrict(handler: RequestListener, o: { host: string; port: number; tlsCert: string | null; tlsKey: string | null; maxConnections: number }): Promise<Listening> {
  const timeouts = connectionTimeouts() // a malformed value stops serve before it listens
  const { listen } = await import('listhen')
  const none = [] as unknown as [number, number]
  let listener
  try {
    listener = await listen(handler, {
      port: { port: o.port, random: o.port === 0, ports: [], portRange: none, alternativePortRange: none, host: o.host },
      hostname: o.host,
      https: o.tlsCert && o.tlsKey ? { cert: o.tlsCert, key: o.tlsKey } : false,
      showURL: false, open: false, clipboard: false, qr: false, tunnel: false, autoClose: false, public: false, isProd: true,
    })
  } catch (err) {
    const msg = (err as Error).message
    if (/available port/i.test(msg)) throw new Error(`port ${o.port} on ${o.host} is in use (or not allowed); choose another with --port, or 0 for any free port`)
    throw new Error(`cannot listen on ${o.host}:${o.port}: ${msg}`)
  }
  const server = listener.server
  boundConnections(server as Server, o.maxConnections, timeouts)
  const host = o.host.includes(':') ? `[${o.host}]` : o.host
  return { server, url: `${listener.https ? 'https' : 'http'}://${host}:${listener.address.port}` }
}
