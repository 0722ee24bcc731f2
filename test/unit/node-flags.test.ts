import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { spawnSync } from 'node:child_process'
import { NODE_FLAGS } from '../../src/node-flags.ts'

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
    const r = spawnSync(process.execPath, [...NODE_FLAGS, '--import', 'tsx', '--input-type=module', '-e', script(apply)], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    return Number(r.stdout.trim())
  }
  const without = peakMb(false)
  const withFlags = peakMb(true)
  assert.ok(withFlags < without * 0.6, `old space peak ${withFlags} MB with serve's flags against ${without} MB without`)
})
