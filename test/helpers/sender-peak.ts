// A child of test/unit/node-flags.test.ts: the delivery engine's real sender in a fresh process,
// started with the V8 flags under test. It sends one webhook, starts the kernel's peak RSS
// afresh, sends 2,000 more (8 at a time) to the receiver at argv[2], and prints how far the peak
// rose above the RSS it started from, in MB.
import { readFileSync, writeFileSync } from 'node:fs'
import { createSender } from '../../src/delivery/send.ts'

const url = process.argv[2]!
const mb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024
const sender = createSender({ timeoutMs: 10_000, allowPrivate: true, userAgent: 'test' })
const body = JSON.stringify({ type: 'order.created', data: { id: 'ord_1', items: [{ description: 'a room', quantity: 2, unitPrice: 12000 }] } })
const send = async () => {
  const r = await sender.send({ url, body, headers: { 'content-type': 'application/json' }, key: 'k' })
  if (r.responseCode !== 200) throw new Error(JSON.stringify(r))
}
await send()
writeFileSync('/proc/self/clear_refs', '5')
const before = mb('VmRSS')
let left = 2000
await Promise.all(Array.from({ length: 8 }, async () => { while (left-- > 0) await send() }))
await new Promise((r) => setTimeout(r, 300)) // room for a compile job on V8's worker threads to run
process.stdout.write(`${(mb('VmHWM') - before).toFixed(1)}\n`)
await sender.close()
