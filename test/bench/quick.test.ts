import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, test } from 'node:test'

// Issue 15: `npm run bench -- --quick` runs every phase of the benchmark on both engines with
// small counts and short runs, so the harness cannot rot between full runs (which are never in
// CI). Figures are not judged here (speed is the benchmark's business, not a test's): the test
// checks that every figure was measured, on the engine it names, and that bench/results.json,
// the full run's record, was left alone.

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PG_URL = process.env.TRAVELOPS_TEST_PG_URL

const SQLITE_FIGURES = [
  'list-orders-1k', 'get-order', 'list-orders-100k', 'list-orders-size', 'list-orders-deep-page', 'list-orders-deep',
  'layers-same-response', 'layers-middleware', 'layers-key-check', 'layers-full', 'layers-floor', 'layers-floor-list', 'layers-floor-post', 'create-order', 'create-order-delivering', 'delivery-loop',
  'latency-p50', 'latency-p99', 'stream-latency-p99', 'sustained', 'isolation-p50', 'isolation-p99', 'flood-p50', 'flood-p99', 'idle-connections-health-p99', 'startup', 'peak-rss',
  'create-order-1k', 'create-order-large', 'create-order-size', 'delivery-loop-size', 'retention-p99',
]
const PG_FIGURES = [
  'pg-get-order', 'pg-list-orders-100k', 'pg-list-orders-deep-page', 'pg-list-orders-deep', 'pg-layers-floor', 'pg-layers-floor-list', 'pg-create-order', 'pg-delivery-loop', 'pg-latency-p50', 'pg-latency-p99', 'pg-sustained',
  'pg-isolation-p50', 'pg-isolation-p99', 'pg-flood-p50', 'pg-flood-p99', 'pg-startup', 'pg-peak-rss', 'pg-two-processes',
  'pg-create-order-1k', 'pg-create-order-large', 'pg-create-order-size', 'pg-delivery-loop-size', 'pg-retention-p99',
]

describe('npm run bench -- --quick', () => {
  let dir: string
  before(() => { dir = mkdtempSync(join(tmpdir(), 'travelops-bench-quick-')) })
  after(() => rmSync(dir, { recursive: true, force: true }))

  test(`measures every figure on SQLite${PG_URL ? ' and PostgreSQL' : ' (PostgreSQL: no TRAVELOPS_TEST_PG_URL)'}, judges none, leaves bench/results.json alone`, { timeout: 300_000 }, async () => {
    const out = join(dir, 'results.json')
    const recorded = readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')
    const env = { ...process.env, ...(PG_URL ? { BENCH_PG_URL: PG_URL } : { BENCH_ONLY: 'reads,layers,post,delivery,latency,streams,sustained,isolation,connections,startup,scale' }) }
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'bench.ts'), '--quick', '--out', out], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (d: Buffer) => { output += d.toString() })
    child.stderr.on('data', (d: Buffer) => { output += d.toString() })
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    assert.equal(code, 0, output)

    const results = JSON.parse(readFileSync(out, 'utf8')) as { settings: { quick: boolean }; figures: { id: string; engine: string; value: number; pass: unknown; unit: string }[]; machine: { loadavg_start: number[]; loadavg_end: number[] } }
    assert.equal(results.settings.quick, true)
    const expected = [...SQLITE_FIGURES, ...(PG_URL ? PG_FIGURES : [])]
    assert.deepEqual(results.figures.map((f) => f.id).sort(), [...expected].sort(), output)
    for (const f of results.figures) {
      assert.equal(f.engine, f.id.startsWith('pg-') ? 'postgres' : 'sqlite', f.id)
      assert.ok(Number.isFinite(f.value) && (f.unit === 'ms' ? f.value >= 0 : f.value > 0), `${f.id}: ${f.value} ${f.unit}`)
      assert.equal(f.pass, null, `${f.id}: a quick run judges no target`)
    }
    // The scale figures' delivery loop: the median of its passes (one with --quick), every pass recorded.
    for (const f of results.figures.filter((g) => g.id.endsWith('delivery-loop-size')) as unknown as { id: string; value: number; pass_ratios_none: number[]; pass_ratios_large: number[] }[]) {
      assert.equal(f.pass_ratios_none.length, 1, f.id)
      assert.equal(f.pass_ratios_large.length, 1, f.id)
      assert.ok(Math.abs(f.value - f.pass_ratios_large[0]! / f.pass_ratios_none[0]!) < 1e-9, `${f.id}: ${f.value} from its passes`)
    }
    // What else the machine did: each load-measured figure carries the share of the cores busy and
    // the load generator's CPU (a delivery loop: the receiver's), and on PostgreSQL — a server on
    // this machine — PostgreSQL's own processes' CPU per request; a SQLite figure never does.
    type Beside = { id: string; cpuUs: number | null; host_busy?: number; client_cpu_us?: number; receiver_cpu_us?: number; db_cpu_us?: number }
    const measured = (results.figures as unknown as Beside[]).filter((f) => f.host_busy !== undefined)
    const loadIds = expected.filter((id) => /(get-order|list-orders-(1k|100k|deep-page)|layers-|create-order(-delivering|-1k|-large)?$)/.test(id))
    const loopIds = expected.filter((id) => id.endsWith('delivery-loop'))
    assert.deepEqual(measured.map((f) => f.id).sort(), [...loadIds, ...loopIds].sort())
    for (const f of measured) {
      assert.ok(f.host_busy! > 0 && f.host_busy! <= 1, `${f.id}: the cores ${f.host_busy} busy`)
      const beside = f.id.endsWith('delivery-loop') ? f.receiver_cpu_us : f.client_cpu_us
      assert.ok(beside! > 0, `${f.id}: ${beside} µs of the load generator or receiver`)
      // PostgreSQL's CPU is read in clock ticks (10 ms): a --quick window of 0.4 s on a loaded
      // machine can serve reads that cost it less than one, so one figure may read 0; all cannot.
      if (f.id.startsWith('pg-')) assert.ok(Number.isFinite(f.db_cpu_us) && f.db_cpu_us! >= 0, `${f.id}: PostgreSQL's ${f.db_cpu_us} µs`)
      else assert.equal(f.db_cpu_us, undefined, f.id)
    }
    if (PG_URL) assert.ok(measured.some((f) => f.id.startsWith('pg-') && f.db_cpu_us! > 0), 'PostgreSQL\'s CPU read as 0 for every figure')
    if (PG_URL) {
      const two = results.figures.find((f) => f.id === 'pg-two-processes') as unknown as Record<'one' | 'two', Beside>
      for (const side of [two.one, two.two]) assert.ok(side.db_cpu_us! > 0 && side.host_busy! > 0 && side.client_cpu_us! > 0, JSON.stringify(side))
    }
    const sustained = results.figures.find((f) => f.id === 'sustained')!
    assert.ok(sustained.value <= 1, `sustained is a share of the webhooks sent: ${sustained.value}`)
    assert.equal(results.machine.loadavg_start.length, 3)
    assert.equal(results.machine.loadavg_end.length, 3)
    assert.equal(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8'), recorded, 'the full run\'s bench/results.json is left alone')
  })
})
