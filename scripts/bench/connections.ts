// The "idle connections" figure (CONTRACT §16, connections): `/health` answered on a keep-alive
// connection opened before 2× --max-connections idle TCP connections arrive (the excess closed
// at once by serve, the rest held open sending nothing), against the same connection's answers
// before they arrived. A `serve` of its own (the real CLI, ./travelops) with a small bound.
import { spawn } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Client } from 'undici'
import { percentile } from './report.ts'

export interface IdleConnectionsResult {
  bound: number
  /** Idle connections opened (2 × bound). */
  opened: number
  /** Of those, closed by serve at once (before the measured part). */
  refused: number
  /** Of those, still open when the measured part ended. */
  held: number
  n: number
  p50: number
  p99: number
  max: number
  /** The same connection's /health before the idle connections came. */
  before: { p50: number; p99: number }
}

/** `durationS` of sequential /health requests each side; under the 10 s head timeout, so the idle connections stay for all of it. */
export async function measureIdleConnections(o: { root: string; tmp: string; bound: number; durationS: number }): Promise<IdleConnectionsResult> {
  if (o.durationS >= 8) throw new Error('idle connections: the measured part must end before serve closes them (10 s)')
  const child = spawn(join(o.root, 'travelops'), ['serve', '--port', '0', '--db', join(o.tmp, 'connections.db'), '--max-connections', String(o.bound), '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  const idle: Socket[] = []
  let client: Client | undefined
  let opening = false
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = ''
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString()
        const m = /listening on (http:\/\/\S+)/.exec(out)
        if (m) resolve(m[1]!)
      })
      child.once('exit', (code) => reject(new Error(`idle connections: serve exited with ${code}`)))
    })
    client = new Client(url, { pipelining: 1, keepAliveTimeout: 60_000 })
    const c = client
    const health = async () => {
      const t0 = performance.now()
      const res = await c.request({ method: 'GET', path: '/health' })
      await res.body.text()
      if (res.statusCode !== 200) throw new Error(`idle connections: /health answered ${res.statusCode}`)
      return performance.now() - t0
    }
    const run = async () => {
      const times: number[] = []
      const end = performance.now() + o.durationS * 1000
      while (performance.now() < end) times.push(await health())
      return times.sort((a, b) => a - b)
    }
    for (let i = 0; i < 200; i++) await health() // warm-up, and the connection is open before the others come
    const before = await run()

    // The kept connection asks for /health every 0.5 s while the others come: on a loaded machine,
    // opening and refusing them outlasted serve's 5 s keep-alive, which closed the kept connection
    // and ended the whole bench with undici's "other side closed".
    opening = true
    const ticking = (async () => {
      while (opening) {
        await health()
        await sleep(500)
      }
    })()
    ticking.catch(() => {}) // awaited below; when the connections fail first, theirs is the error reported
    let closed = 0
    const { hostname, port } = new URL(url)
    await Promise.all(Array.from({ length: 2 * o.bound }, () => new Promise<void>((resolve, reject) => {
      const s = connect(Number(port), hostname)
      s.on('error', () => {})
      s.once('close', () => closed++)
      s.once('connect', () => resolve())
      s.once('error', reject)
      idle.push(s)
    })))
    // The kept connection is one of the bound: the rest of it stays open, the others are closed.
    const excess = 2 * o.bound - (o.bound - 1)
    for (let i = 0; closed < excess; i++) {
      if (i > 500) throw new Error(`idle connections: ${closed} of ${2 * o.bound} closed, not ${excess}`)
      await sleep(10)
    }
    opening = false
    await ticking
    const refused = closed
    const during = await run()
    const held = idle.filter((s) => !s.destroyed && s.readyState === 'open').length
    return {
      bound: o.bound, opened: idle.length, refused, held, n: during.length,
      p50: percentile(during, 50), p99: percentile(during, 99), max: during[during.length - 1] ?? NaN,
      before: { p50: percentile(before, 50), p99: percentile(before, 99) },
    }
  } finally {
    opening = false
    for (const s of idle) s.destroy()
    await client?.close().catch(() => {})
    child.kill('SIGTERM')
    await exited
  }
}
