import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { verifySignature } from '../../src/delivery/sign.ts'
import { orderBody } from '../helpers/app.ts'
import { apiClient, cliCommand, migratedDb, runCli, runJson, startServe, until, type ServeProcess } from '../helpers/cli.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

// CONTRACT §15: `travelops listen --forward-to <url>` follows the event stream of a running serve
// and POSTs each event signed exactly as a delivery, with the secret it printed (or was given);
// one line per event; it resumes by itself after serve restarts, and Ctrl-C exits 0.

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

const freePort = () => new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address() as { port: number }
    s.close(() => resolve(port))
  })
})

interface Listener {
  child: ChildProcess
  lines: string[]
  stderr(): string
  exited: Promise<number | null>
}

async function startListen(args: string[], env: Record<string, string> = {}): Promise<Listener> {
  const cmd = await cliCommand(['listen', ...args], env)
  const child = spawn(cmd.argv[0]!, cmd.argv.slice(1), { env: cmd.env, stdio: ['ignore', 'pipe', 'pipe'] })
  const lines: string[] = []
  let out = ''
  let err = ''
  child.stdout!.on('data', (d: Buffer) => {
    out += d
    const parts = out.split('\n')
    out = parts.pop()!
    lines.push(...parts)
  })
  child.stderr!.on('data', (d: Buffer) => { err += d })
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  return { child, lines, stderr: () => err, exited }
}

describe('travelops listen', () => {
  let dir: string
  let db: string
  let key: string
  let port: number
  let serve: ServeProcess
  let rx: Receiver
  const listeners: Listener[] = []

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-listen-'))
    db = await migratedDb(join(dir, 'travelops.db'))
    port = await freePort()
    serve = await startServe(['--db', db, '--port', String(port), '--log-level', 'warn'])
    const tenant = await runJson(['tenants', 'create', '--name', 'Listen', '--db', db])
    key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--scopes', 'events:read,orders:*,customers:*', '--rate-limit', '100000', '--db', db])).key
    rx = await startReceiver()
  })
  after(async () => {
    for (const l of listeners) l.child.kill('SIGKILL')
    await serve.stop().catch(() => {})
    await rx.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('forwards each event to a loopback URL signed as a delivery (the standardwebhooks package verifies it), one JSON object per event, and resumes after serve restarts', async () => {
    const l = await startListen(['--forward-to', `${rx.url}/hooks`, '--server', serve.url, '--secret', SECRET, '--json'], { TRAVELOPS_API_KEY: key })
    listeners.push(l)
    // Connected: the stream is registered before its answer, so every later event comes through it.
    await until('listen connected', () => l.stderr().includes(`Connected to ${serve.url}`))
    assert.match(l.stderr(), new RegExp(`Signing secret: ${SECRET}`))
    const first = (await apiClient(serve.url, key)('POST', '/v1/orders', orderBody())).body.data.id
    const [got] = await rx.waitFor(1)
    assert.equal(got!.method, 'POST')
    assert.equal(got!.url, '/hooks')
    const wh = new Webhook(SECRET)
    const headers = Object.fromEntries(Object.entries(got!.headers).map(([k, v]) => [k, String(v)]))
    const envelope = wh.verify(got!.body, headers) as { id: string; event: string; data: { id: string } }
    assert.equal(envelope.data.id, first)
    assert.ok(verifySignature(SECRET, got!.body, String(got!.headers['x-webhook-signature'])))
    assert.equal(got!.headers['x-webhook-id'], envelope.id)
    assert.equal(got!.headers['content-type'], 'application/json')
    assert.match(String(got!.headers['user-agent']), /^travelops\//)
    const stored = (await apiClient(serve.url, key)('GET', `/v1/events/${envelope.id}`)).body.data
    assert.equal(got!.body, JSON.stringify(stored), 'the body is the envelope, byte for byte')
    const line = await until('its line', () => l.lines.map((x) => JSON.parse(x)).find((x) => x.id === envelope.id))
    assert.deepEqual(Object.keys(line).sort(), ['duration_ms', 'event', 'id', 'status', 'time'])
    assert.equal(line.event, 'order.created')
    assert.equal(line.status, 200)

    // serve restarts on the same port; an order made on the new process is forwarded, and none twice.
    assert.equal(await serve.stop(), 0)
    serve = await startServe(['--db', db, '--port', String(port), '--log-level', 'warn'])
    const second = (await apiClient(serve.url, key)('POST', '/v1/orders', orderBody())).body.data.id
    const all = await rx.waitFor(2, 15_000)
    assert.equal(JSON.parse(all[1]!.body).data.id, second)
    await until('reconnected and resumed', () => /resuming after evt_/.test(l.stderr()))
    const third = (await apiClient(serve.url, key)('POST', '/v1/orders', orderBody())).body.data.id
    const three = await rx.waitFor(3)
    assert.deepEqual(three.map((r) => JSON.parse(r.body).data.id), [first, second, third])

    l.child.kill('SIGINT')
    assert.equal(await l.exited, 0, l.stderr())
  })

  test('prints one line per event: time, name, id, the answer\'s status and duration; a failing target is a line too', async () => {
    const down = await startReceiver({ respond: [503] })
    const l = await startListen(['--forward-to', `${down.url}/x`, '--server', serve.url, '--key', key])
    listeners.push(l)
    try {
      await until('connected', () => l.stderr().includes('Connected to'))
      assert.match(l.stderr(), /Signing secret: whsec_[A-Za-z0-9+/]{43}=/)
      await apiClient(serve.url, key)('POST', '/v1/orders', orderBody())
      await until('its line', () => l.lines.length > 0)
      assert.match(l.lines[0]!, /^\d\d:\d\d:\d\d {2}order\.created {7}evt_[0-9a-f-]{36} {2}→ 503 {2}\d+ ms$/)
      l.child.kill('SIGTERM')
      assert.equal(await l.exited, 0)
    } finally {
      await down.close()
    }
  })

  test('usage errors exit 2; a key without events:read exits 1 naming the scope', async () => {
    const bad = await runCli(['listen', '--forward-to', 'ftp://example.com', '--key', key])
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /--forward-to must be an http or https URL/)
    const noKey = await runCli(['listen', '--forward-to', rx.url], { env: { TRAVELOPS_API_KEY: '' } })
    assert.equal(noKey.code, 2)
    assert.match(noKey.stderr, /--key/)
    const tenant = await runJson(['tenants', 'create', '--name', 'No events', '--db', db])
    const orders = (await runJson(['keys', 'create', '--tenant', tenant.id, '--scopes', 'orders:*', '--db', db])).key
    const refused = await runCli(['listen', '--forward-to', rx.url, '--server', serve.url, '--key', orders])
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /403 .*events:read/)
  })
})
