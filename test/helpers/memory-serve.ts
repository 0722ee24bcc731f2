// A `serve` (startServer, in its own process, started with --expose-gc by test/api/memory.test.ts)
// that answers the test over IPC: `setup` makes a tenant, a key and two subscriptions; `gc`
// collects garbage until the heap stops shrinking and answers process.memoryUsage();
// `promoted:start` / `promoted:stop` count what young-generation collections moved to old space meanwhile.
import { GCProfiler, getHeapSpaceStatistics } from 'node:v8'
import { DEFAULT_CONFIG } from '../../src/config.ts'
import { createKey } from '../../src/modules/keys/service.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { startServer } from '../../src/server.ts'
import { offlineResolve } from './offline-dns.ts'

type Msg = { type: string; [k: string]: unknown }
const send = (m: Msg) => process.send!(m)

async function main(): Promise<void> {
  const db = process.argv[2]!
  const server = await startServer({ ...DEFAULT_CONFIG, db, port: 0, allowPrivateTargets: true, logLevel: 'silent', rateLimit: 1_000_000_000 }, { resolve: offlineResolve })
  const gc = (globalThis as { gc?: () => void }).gc
  if (!gc) throw new Error('start me with --expose-gc')
  let profiler: GCProfiler | undefined
  process.on('message', async (m: Msg) => {
    try {
      if (m.type === 'setup') {
        const t = await createTenant(server.deps.db, 'Memory', new Date())
        const k = await createKey(server.deps.db, { tenantId: t.id, scopes: ['*'] }, new Date())
        send({ type: 'setup:ok', key: k.key })
      } else if (m.type === 'gc') {
        let last = Infinity
        for (let i = 0; i < 10; i++) {
          gc()
          await new Promise((r) => setTimeout(r, 20))
          const used = process.memoryUsage().heapUsed
          if (used >= last * 0.99) break
          last = used
        }
        const spaces = Object.fromEntries(getHeapSpaceStatistics().map((sp) => [sp.space_name, Math.round(sp.space_size / 2 ** 20)]))
        send({ type: 'gc:ok', ...process.memoryUsage(), spaces })
      } else if (m.type === 'promoted:start') {
        profiler = new GCProfiler()
        profiler.start()
        send({ type: 'promoted:start:ok' })
      } else if (m.type === 'promoted:stop') {
        // Each scavenge's growth of old space: the objects it promoted (alive at two scavenges in a row).
        const used = (at: { heapSpaceStatistics: { spaceName: string; spaceUsedSize: number }[] }) =>
          at.heapSpaceStatistics.find((sp) => sp.spaceName === 'old_space')?.spaceUsedSize ?? 0
        let bytes = 0
        let scavenges = 0
        for (const collection of profiler!.stop()?.statistics ?? []) {
          if (collection.gcType !== 'Scavenge') continue
          scavenges++
          bytes += Math.max(0, used(collection.afterGC) - used(collection.beforeGC))
        }
        send({ type: 'promoted:stop:ok', bytes, scavenges })
      } else if (m.type === 'stop') {
        await server.stop(2000)
        process.exit(0)
      }
    } catch (err) {
      send({ type: `${m.type}:error`, error: String((err as Error)?.stack ?? err) })
    }
  })
  process.on('disconnect', () => process.exit(0))
  send({ type: 'ready', url: server.url })
}

main().catch((err: unknown) => {
  process.stderr.write(`memory serve failed: ${String((err as Error)?.stack ?? err)}\n`)
  process.exit(1)
})
