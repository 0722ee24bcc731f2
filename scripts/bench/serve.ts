// The real `serve` for the benchmark: startServer() with the default configuration but
// port 0, loopback webhook targets allowed and logging on at info level (and the retention
// given as a second argument, for the retention figure). stderr (the JSON
// log lines) is redirected by the orchestrator to a file.
import { DEFAULT_CONFIG } from '../../src/config.ts'
import { startServer } from '../../src/server.ts'
import { readFileSync, writeFileSync } from 'node:fs'
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks'
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8'
import { on, send } from './child.ts'

async function main(): Promise<void> {
  const db = process.argv[2]
  if (!db) throw new Error('usage: serve.ts <db file or PostgreSQL URL> [retention in ms]')
  const retentionMs = process.argv[3] ? Number(process.argv[3]) : DEFAULT_CONFIG.retentionMs
  const server = await startServer({ ...DEFAULT_CONFIG, db, port: 0, allowPrivateTargets: true, logLevel: 'info', retentionMs })
  // Stopped this way (not killed), a `--cpu-prof` run writes its profile.
  on('stop', async () => {
    await server.stop(2000)
    setTimeout(() => process.exit(0), 100)
    return {}
  })
  // Time spent in garbage collection (main thread pauses, ms), by kind: what V8 flags cost, independent of the machine's load.
  const gcMs: Record<string, number> = {}
  const kinds: Record<number, string> = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb' }
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = kinds[(e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0] ?? 'other'
      gcMs[kind] = (gcMs[kind] ?? 0) + e.duration
    }
  }).observe({ entryTypes: ['gc'] })
  // Where serve's memory is (the bench logs it after each group): Node's figures, V8's spaces, the kernel's split.
  on('memory', () => {
    const mb = (n: number) => Math.round(n / 1048576)
    const m = process.memoryUsage()
    const rollup = readFileSync('/proc/self/smaps_rollup', 'utf8')
    const kb = (k: string) => mb(Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0) * 1024)
    return {
      rss: mb(m.rss), heapUsed: mb(m.heapUsed), heapTotal: mb(m.heapTotal), external: mb(m.external), arrayBuffers: mb(m.arrayBuffers),
      spaces: Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, mb(s.space_size)])),
      gcMs: Object.fromEntries(Object.entries(gcMs).map(([k, v]) => [k, Math.round(v)])),
      anon: kb('Anonymous'), file: kb('Rss') - kb('Anonymous'), shared: kb('Shared_Clean') + kb('Shared_Dirty'),
    }
  })
  // Where serve allocates (BENCH_HEAP_PROFILE=<file>): V8's sampling heap profiler from here to the end of
  // the run, counting objects the collector has freed too (what the young generation churns through).
  const heapProfile = process.env.BENCH_HEAP_PROFILE
  if (heapProfile) {
    const session = new (await import('node:inspector/promises')).Session()
    session.connect()
    await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
    on('heap-profile', async () => {
      const { profile } = await session.post('HeapProfiler.stopSampling')
      writeFileSync(heapProfile, JSON.stringify(profile))
      return { file: heapProfile }
    })
  }
  if (process.env.BENCH_HEAP_SNAPSHOT) on('snapshot', () => ({ file: writeHeapSnapshot(process.env.BENCH_HEAP_SNAPSHOT) }))
  send({ type: 'ready', url: server.url })
}

main().catch((err: unknown) => {
  process.stderr.write(`bench serve failed: ${String((err as Error)?.stack ?? err)}\n`)
  process.exit(1)
})
