import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { execFile, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { NODE_FLAGS } from '../../src/node-flags.ts'
import { startReceiver } from '../helpers/receiver.ts'

test('the checkout\'s ./travelops launcher passes exactly the V8 flags of src/node-flags.ts', () => {
  const launcher = readFileSync(new URL('../../travelops', import.meta.url), 'utf8')
  const exec = launcher.split('\n').find((l) => l.startsWith('exec '))!
  assert.equal(exec, `exec "$node" ${NODE_FLAGS.join(' ')} "$here/cli/bin.cjs" "$@"`)
})

test('serve\'s V8 flags set at run time still bound the old generation: old space stays near what is alive', () => {
  // The same allocation pattern (a live set of ~60 MB, churn around it) in two fresh processes with
  // the start flags, one calling applyServeV8Flags() first; V8 reads --heap-growing-percent at each
  // collection, which is why serve may set it once it listens (src/node-flags.ts).
  const script = (apply: boolean) => `
    import v8 from 'node:v8'
    ${apply ? `const { applyServeV8Flags } = await import(${JSON.stringify(new URL('../../src/node-flags.ts', import.meta.url).href)}); applyServeV8Flags()` : ''}
    const live = []
    for (let i = 0; i < 300000; i++) live.push({ a: 'x' + i, b: [i, i + 1], c: { d: i } })
    let peak = 0
    for (let round = 0; round < 200; round++) {
      const tmp = []
      for (let i = 0; i < 20000; i++) tmp.push({ a: 'y' + i, b: [i], c: { d: i, e: 'z'.repeat(20) } })
      if (round % 10 === 0) live.splice(0, 1000, ...tmp.slice(0, 1000))
      peak = Math.max(peak, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_size)
    }
    console.log(Math.round(peak / 2 ** 20))`
  const peakMb = (apply: boolean) => {
    const r = spawnSync(process.execPath, [...NODE_FLAGS, '--input-type=module', '-e', script(apply)], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    return Number(r.stdout.trim())
  }
  const without = peakMb(false)
  const withFlags = peakMb(true)
  assert.ok(withFlags < without * 0.6, `old space peak ${withFlags} MB with serve's flags against ${without} MB without`)
})

test('the delivery engine\'s HTTP client does not have its parser compiled again: sending webhooks leaves the peak RSS alone', async () => {
  // undici parses answers with llhttp, WebAssembly; without --liftoff-only V8 compiles the hot
  // parser again with TurboFan on a worker thread, ~14 MB of compiler memory at once (measured:
  // the peak rose 21–22 MB over these sends against 8.4–8.6 MB with every flag). Two fresh processes, the real sender, the same sends.
  const rx = await startReceiver()
  const child = fileURLToPath(new URL('../helpers/sender-peak.ts', import.meta.url))
  const riseMb = async (flags: readonly string[]) => {
    const r = await promisify(execFile)(process.execPath, [...flags, child, `${rx.url}/hook`], { encoding: 'utf8' })
    return Number(r.stdout.trim())
  }
  try {
    const without = await riseMb(NODE_FLAGS.filter((f) => f !== '--liftoff-only'))
    const withFlags = await riseMb(NODE_FLAGS)
    process.stdout.write(`# peak RSS over 2,000 sends: +${withFlags} MB with travelops' flags, +${without} MB without --liftoff-only\n`)
    assert.ok(withFlags + 8 < without, `peak RSS rose ${withFlags} MB over 2,000 sends with travelops' flags against ${without} MB without --liftoff-only`)
  } finally {
    await rx.close()
  }
})
