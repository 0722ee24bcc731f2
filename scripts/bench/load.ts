// The load generator, in its own process: autocannon against one URL. It warms up first,
// then says `warm` and waits for `go` (so the orchestrator can read the server's CPU time
// right before), runs the measured part and sends the result.
import autocannon from 'autocannon'
import { readFileSync } from 'node:fs'
import { next, send } from './child.ts'

export interface LoadSpec {
  url: string
  connections: number
  warmupS: number
  durationS: number
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
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2]!) as LoadSpec
  const paths = spec.pathsFile ? readFileSync(spec.pathsFile, 'utf8').split('\n').filter(Boolean) : spec.paths ?? ['/']
  const requests = paths.map((path) => ({ method: spec.method, path, headers: spec.headers, body: spec.body }))
  const run = (duration: number) => autocannon({ url: spec.url, connections: spec.connections, pipelining: 1, duration, requests })
  if (spec.warmupS > 0) await run(spec.warmupS)
  send({ type: 'warm' })
  await next('go')
  const r = await run(spec.durationS)
  const statusCodes: Record<string, number> = {}
  for (const [code, v] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = Number(v.count)
  const ok = r['2xx']
  const result: LoadResult = {
    ok, non2xx: r.non2xx, errors: r.errors + r.timeouts, seconds: r.duration,
    reqPerS: ok / r.duration, p50Ms: r.latency.p50, p99Ms: r.latency.p99, statusCodes,
  }
  send({ type: 'result', ...result })
}

main().catch((err: unknown) => {
  process.stderr.write(`bench load failed: ${String((err as Error)?.stack ?? err)}\n`)
  process.exit(1)
})
