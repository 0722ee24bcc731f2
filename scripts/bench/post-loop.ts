// Baseline of the delivery figure: a bare loop of keep-alive POSTs of the same bodies with
// undici at the same concurrency as the delivery worker, nothing else (no database, no signing).
// One pass takes about a second and its rate swung 12–24 k/s between two passes of one run
// (2026-11-25), so it makes `rounds` passes and reports the one of median rate.
import { readFileSync } from 'node:fs'
import { Agent, request } from 'undici'
import { next, selfStats, send } from './child.ts'

async function main(): Promise<void> {
  const { url, bodiesFile, concurrency, rounds } = JSON.parse(process.argv[2]!) as { url: string; bodiesFile: string; concurrency: number; rounds: number }
  const bodies = JSON.parse(readFileSync(bodiesFile, 'utf8')) as string[]
  const agent = new Agent({ connections: concurrency, pipelining: 1, keepAliveTimeout: 10_000 })
  const post = async (body: string) => {
    const res = await request(url, { dispatcher: agent, method: 'POST', headers: { 'content-type': 'application/json' }, body })
    await res.body.text()
    if (res.statusCode !== 200) throw new Error(`receiver answered ${res.statusCode}`)
  }
  const loop = async (list: string[]) => {
    let i = 0
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (i < list.length) await post(list[i++]!)
    }))
  }
  await loop(bodies.slice(0, Math.min(bodies.length, 2000))) // warm-up: connections and JIT
  send({ type: 'warm' })
  await next('go')
  const passes: { seconds: number; perS: number; cpuUs: number }[] = []
  for (let r = 0; r < rounds; r++) {
    const cpu0 = selfStats().cpuUs
    const t0 = performance.now()
    await loop(bodies)
    const seconds = (performance.now() - t0) / 1000
    passes.push({ seconds, perS: bodies.length / seconds, cpuUs: selfStats().cpuUs - cpu0 })
  }
  passes.sort((a, b) => a.perS - b.perS)
  const median = passes[Math.floor(passes.length / 2)]!
  send({ type: 'result', count: bodies.length, ...median, passes: passes.map((p) => Math.round(p.perS)) })
  await agent.close()
}

main().catch((err: unknown) => {
  process.stderr.write(`bench post loop failed: ${String((err as Error)?.stack ?? err)}\n`)
  process.exit(1)
})
