import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { test } from 'node:test'

// The first send of a process loads undici before it can dispatch. Its deadline counts from the
// call all the same, as the worker's backstop counts it (src/delivery/worker/attempt.ts): when the
// loading outlasted the backstop's margin on a loaded machine, the backstop took that attempt for
// stuck, dropped its subscription's connections, and the other attempts logged "The client is
// destroyed". A fresh process of its own, since undici stays loaded once it is.
const CHILD = `
import { createServer } from 'node:net'
import { createSender } from ${JSON.stringify(new URL('../../src/delivery/send.ts', import.meta.url).href)}
const server = createServer(() => {}) // accepts, never answers
await new Promise((r) => server.listen(0, '127.0.0.1', r))
const sender = createSender({ timeoutMs: 1000, allowPrivate: true, userAgent: 'travelops/test' })
const t0 = performance.now()
const sent = sender.send({ url: 'http://127.0.0.1:' + server.address().port + '/', headers: {}, body: '{}' })
// The event loop held for 1 s while undici loads, as a loaded machine holds it.
while (performance.now() - t0 < 1000) {}
const result = await sent
process.stdout.write(JSON.stringify({ endedAfterMs: performance.now() - t0, error: result.error }))
await sender.close()
server.close()
`

test('the first send of a process ends by its deadline counted from the call, though loading undici held it', async () => {
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  assert.equal(code, 0, out)
  const { endedAfterMs, error } = JSON.parse(out) as { endedAfterMs: number; error: string }
  assert.match(error, /^timeout after 1000 ms/)
  // Counted from the call, the deadline had passed when the loop was free again: it ends then, not
  // a whole second later (at 2 s or more, as when it was counted from the end of the loading).
  assert.ok(endedAfterMs < 1700, `ended ${Math.round(endedAfterMs)} ms after the call`)
})
