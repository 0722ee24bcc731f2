// A `serve` (startServer, in its own process, started with --expose-gc by test/api/memory.test.ts)
// that answers the test over IPC: `setup` makes a tenant, a key and two subscriptions; `gc`
// collects garbage until the heap stops shrinking and answers process.memoryUsage();
// `promoted:start` / `promoted:stop` count what young-generation collections moved to old space meanwhile;
// `queue` gives a new subscription `n` queued deliveries, `queued` counts a subscription's,
// `peak:reset` starts the kernel's peak RSS (VmHWM) afresh, `peak` reads it.
import { readFileSync, writeFileSync } from 'node:fs'
import { GCProfiler, getHeapSpaceStatistics } from 'node:v8'
import { newId } from '../../src/lib/ids.ts'
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
  let tenantId = ''
  const status = () => {
    const s = readFileSync('/proc/self/status', 'utf8')
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)![1]) * 1024
    return { hwm: kb('VmHWM'), rss: kb('VmRSS') }
  }
  process.on('message', async (m: Msg) => {
    try {
      if (m.type === 'setup') {
        const t = await createTenant(server.deps.db, 'Memory', new Date())
        const k = await createKey(server.deps.engine, { tenantId: t.id, scopes: ['*'] }, new Date())
        tenantId = t.id
        send({ type: 'setup:ok', key: k.key })
      } else if (m.type === 'queue') {
        // A subscription (to a port nothing listens on) with `n` deliveries due in an hour, the worker leaves them alone; each of
        // their events also has `spread` deliveries of another subscription, written between them, as a tenant's many subscriptions' are.
        const { db } = server.deps
        const now = new Date().toISOString()
        const due = new Date(Date.now() + 3_600_000).toISOString()
        const [webhook, other] = [newId('wh'), newId('wh')]
        await db.insertInto('webhooks').values([webhook, other].map((id) => ({ id, tenant_id: tenantId, url: 'http://127.0.0.1:9/hook', events: '["*"]', secret: 'memory-secret-0123456789', headers: '{}', active: 1, retry_count: 3, created_at: now, updated_at: now })) as never).execute()
        const n = m.n as number
        const spread = m.spread as number
        const delivery = (webhookId: string, eventId: string) => ({ id: newId('del'), tenant_id: tenantId, webhook_id: webhookId, event_id: eventId, event: 'order.created', status: 'pending', attempts: 0, retries: 0, manual: 0, created_at: now, due_at: due })
        for (let done = 0; done < n; done += 100) {
          const evs = Array.from({ length: Math.min(100, n - done) }, () => ({ id: newId('evt'), tenant_id: tenantId, name: 'order.created', payload: '{}', created_at: now }))
          await db.insertInto('events').values(evs as never).execute()
          await db.insertInto('deliveries').values(evs.flatMap((e) => [delivery(webhook, e.id), ...Array.from({ length: spread }, () => delivery(other, e.id))]) as never).execute()
        }
        send({ type: 'queue:ok', webhookId: webhook })
      } else if (m.type === 'queued') {
        const r = await server.deps.db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('webhook_id', '=', m.webhookId as string).where('due_at', 'is not', null).executeTakeFirstOrThrow()
        send({ type: 'queued:ok', n: Number(r.n) })
      } else if (m.type === 'peak:reset') {
        writeFileSync('/proc/self/clear_refs', '5')
        send({ type: 'peak:reset:ok', ...status() })
      } else if (m.type === 'peak') {
        send({ type: 'peak:ok', ...status() })
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
