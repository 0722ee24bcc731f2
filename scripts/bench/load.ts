// The load generator, in its own process: autocannon against one URL, or against several at
// once (`urls`: the connections split between them, one autocannon each, all in this one process:
// the same client whether it aims at one server or at several). It warms up first, then says
// `warm` and waits for `go` (so the orchestrator can read the server's CPU time right before),
// runs the measured part and sends the result (summed over the URLs).
import autocannon from 'autocannon'
import { readFileSync } from 'node:fs'
import { next, selfStats, send } from './child.ts'

export interface LoadSpec {
  url: string
  /** Several servers at once instead of `url`: `connections` split between them. */
  urls?: string[]
  connections: number
  warmupS: number
  durationS: number
  /**
   * Requests instead of seconds (--quick): the warm-up sends `amount[0]`, the measured part
   * `amount[1]`, however long they take. A window of seconds on a machine the test suite keeps
   * busy can close before the first answer; a count cannot, and ends as soon as it is sent.
   */
  amount?: [number, number]
  method: 'GET' | 'POST'
  headers: Record<string, string>
  /** Paths taken in turn; a file of one path per line when `pathsFile` is given. */
  paths?: string[]
  pathsFile?: string
  body?: string
}

export interface LoadResult {
  ok: number
  non2xx: number
  errors: number
  seconds: number
  reqPerS: number
  p50Ms: number
  p99Ms: number
  statusCodes: Record<string, number>
  /** This process's own CPU over the measured part (µs): what the client took of the machine. */
  clientCpuUs: number
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2]!) as LoadSpec
  const paths = spec.pathsFile ? readFileSync(spec.pathsFile, 'utf8').split('\n').filter(Boolean) : spec.paths ?? ['/']
  const requests = paths.map((path) => ({ method: spec.method, path, headers: spec.headers, body: spec.body }))
  const urls = spec.urls ?? [spec.url]
  const per = Math.max(1, Math.round(spec.connections / urls.length))
  // autocannon looks whether its time is up once per sample (every second by default): a 0.5 s
  // run took a whole second. Sampled every 100 ms it stops within 0.1 s of `duration`.
  const run = (duration: number, amount?: number) => Promise.all(urls.map((url) => autocannon({
    url, connections: per, pipelining: 1, duration, requests, sampleInt: 100,
    ...(amount === undefined ? {} : { amount: Math.max(per, Math.ceil(amount / urls.length)) }),
  })))
  if (spec.warmupS > 0) await run(spec.warmupS, spec.amount?.[0])
  send({ type: 'warm' })
  await next('go')
  const cpu0 = selfStats().cpuUs
  const rs = await run(spec.durationS, spec.amount?.[1])
  const clientCpuUs = selfStats().cpuUs - cpu0
  const statusCodes: Record<string, number> = {}
  for (const r of rs) for (const [code, v] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = (statusCodes[code] ?? 0) + Number(v.count)
  const ok = rs.reduce((a, r) => a + r['2xx'], 0)
  const seconds = Math.max(...rs.map((r) => r.duration))
  const result: LoadResult = {
    ok, non2xx: rs.reduce((a, r) => a + r.non2xx, 0), errors: rs.reduce((a, r) => a + r.errors + r.timeouts, 0), seconds,
    reqPerS: rs.reduce((a, r) => a + r['2xx'] / r.duration, 0), p50Ms: Math.max(...rs.map((r) => r.latency.p50)), p99Ms: Math.max(...rs.map((r) => r.latency.p99)), statusCodes, clientCpuUs,
  }
  // Then it ends: the IPC channel would keep it (and its ~50 MB) alive until the whole run ends.
  process.send?.({ type: 'result', ...result }, () => process.disconnect?.())
}

main().catch((err: unknown) => {
  process.stderr.write(`bench load failed: ${String((err as Error)?.stack ?? err)}\n`)
  process.exit(1)
})
