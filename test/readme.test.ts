import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, test } from 'node:test'
import { freePort } from './helpers/pg-server.ts'
import { assertShellBlocksRun, AT_ROOT, docPages, readmeBlocks, shellPages } from './helpers/readme.ts'

// The README and every page of docs/ work word for word: every ```sh block runs with
// `./travelops` being the checkout's launcher (helpers/readme.ts says how; test/package runs them
// again with the executable), each page in a fresh directory of its own, and both Node.js
// receivers of docs/webhooks.md get a real signed delivery.

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const WEBHOOKS = join(ROOT, 'docs', 'webhooks.md')

describe('README and docs/', () => {
  let dir: string
  let ports: number[]

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-readme-'))
    ports = [await freePort(), await freePort()]
  })

  after(() => rmSync(dir, { recursive: true, force: true }))

  for (const page of shellPages(ROOT)) {
    test(`every sh block of ${page} runs and prints what the page says`, async () => {
      const home = join(dir, page.replace(/\W/g, '_'))
      mkdirSync(home)
      await assertShellBlocksRun(join(ROOT, page), { travelops: join(ROOT, 'travelops'), dir: home, ports, minBlocks: page === 'README.md' ? 1 : 0 })
    })
  }

  test('the pages are README.md and every page of docs/', () => {
    const pages = docPages(ROOT)
    assert.equal(pages[0], 'README.md')
    for (const page of ['operator', 'cli', 'api', 'webhooks', 'postgres', 'executable', 'architecture', 'performance']) assert.ok(pages.includes(`docs/${page}.md`), page)
    assert.ok(pages.includes('docs/decisions/README.md'))
    for (const [page, by] of Object.entries(AT_ROOT)) assert.ok(pages.includes(page) && readFileSync(join(ROOT, by), 'utf8').includes(page), `${by} runs ${page}`)
  })

  test('the plain Node.js receiver says what is missing without its secret, and accepts a real signed delivery', async () => {
    const [plain] = readmeBlocks(WEBHOOKS, 'js')
    assert.ok(plain, 'docs/webhooks.md has the receiver')
    const file = join(dir, 'receiver.mjs')
    writeFileSync(file, plain.lines.join('\n'))
    const unset = spawnSync(process.execPath, [file], { encoding: 'utf8', env: { ...process.env, TRAVELOPS_WEBHOOK_SECRET: '' }, timeout: 10_000 })
    assert.notEqual(unset.status, 0)
    assert.match(unset.stderr, /TRAVELOPS_WEBHOOK_SECRET/, unset.stderr)
    assert.doesNotMatch(unset.stderr, /ERR_INVALID_ARG_TYPE/)
    await _deliverTo(file, dir, 'order.created', 'whsec-readme-0123456789')
    await _deliverTo(file, dir, 'order.created', 'generated')
  })

  test('the standardwebhooks receiver verifies a real delivery, with a secret of either kind', async () => {
    const [, library] = readmeBlocks(WEBHOOKS, 'js')
    assert.ok(library)
    const home = join(dir, 'sw')
    mkdirSync(home)
    symlinkSync(join(ROOT, 'node_modules'), join(home, 'node_modules'))
    const file = join(home, 'receiver.mjs')
    writeFileSync(file, library.lines.join('\n'))
    await _deliverTo(file, home, 'order.created', 'whsec-readme-0123456789')
    await _deliverTo(file, home, 'order.created', 'generated')
    await _deliverTo(file, home, 'order.created', `whsec_${Buffer.alloc(24, 7).toString('base64')}`)
  })
})

/**
 * Subscribes a receiver on a real server with `secret` (`generated`: none given, the service's
 * `whsec_` one), starts the receiver file with that secret, makes an order; the receiver must print the event.
 */
async function _deliverTo(file: string, cwd: string, event: string, secret: string): Promise<void> {
  const { startTestApp, orderBody } = await import('./helpers/app.ts')
  const app = await startTestApp({ allowPrivateTargets: true })
  const port = await freePort()
  let child: ReturnType<typeof spawn> | undefined
  let out = ''
  try {
    const t = await app.tenant()
    const body = { url: `http://127.0.0.1:${port}/hook`, events: [event], ...(secret === 'generated' ? {} : { secret }) }
    const webhook = await t.request('POST', '/v1/webhooks', { body })
    assert.equal(webhook.status, 201)
    const key = secret === 'generated' ? webhook.body.data.secret : secret
    if (secret === 'generated') assert.match(key, /^whsec_/)
    child = spawn(process.execPath, [file], { cwd, env: { ...process.env, TRAVELOPS_WEBHOOK_SECRET: key, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout!.on('data', (d) => (out += d))
    child.stderr!.on('data', (d) => (out += d))
    let forged = 0
    for (const started = Date.now(); !forged && Date.now() - started < 10_000;) {
      forged = await _post(port, '{"event":"order.created"}', { 'x-webhook-signature': '00'.repeat(32) }).catch(() => new Promise<number>((r) => setTimeout(() => r(0), 50)))
    }
    assert.equal(forged, 401, `a wrong signature is refused; the receiver printed: ${out}`)
    const order = await t.request('POST', '/v1/orders', { body: orderBody() })
    assert.equal(order.status, 201)
    const deadline = Date.now() + 15_000
    while (!out.includes(order.body.data.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    assert.match(out, new RegExp(`${event} ${order.body.data.id}`), `the receiver printed: ${out}`)
    const deliveries = (await t.request('GET', '/v1/webhooks/deliveries')).body.data
    assert.equal(deliveries[0].status, 'delivered', JSON.stringify(deliveries[0]))
  } finally {
    child?.kill()
    await app.close()
  }
}

function _post(port: number, body: string, headers: Record<string, string>): Promise<number> {
  return fetch(`http://127.0.0.1:${port}/hook`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } }).then((r) => r.status)
}
