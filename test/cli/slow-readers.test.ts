import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { bigContent } from '../helpers/big-content.ts'
import { apiClient, runJson, startServe, migratedDb } from '../helpers/cli.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const kb = (field: string, pid: number) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)

/**
 * §9 Response size: forty clients that ask for the largest pages and read slowly keep `serve`
 * under 512 MB resident, and /health answers within 1 s meanwhile (measured on the process).
 */
test('40 slow readers of the largest pages: serve stays under 512 MB and /health answers within 1 s', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'travelops-slow-'))
  const db = await migratedDb(join(dir, 'slow.db'))
  const tenant = await runJson(['tenants', 'create', '--name', 'Big', '--db', db])
  const key = (await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])).key
  const server = await startServe(['--db', db, '--log-level', 'silent'])
  const pid = server.child.pid!
  const sockets: Socket[] = []
  try {
    const api = apiClient(server.url, key)
    for (let i = 0; i < 100; i++) assert.equal((await api('POST', '/v1/content/pages', bigContent(i))).status, 201)
    const { port } = new URL(server.url)
    let received = 0
    for (let i = 0; i < 40; i++) {
      const s = connect(Number(port), '127.0.0.1')
      s.write(`GET /v1/content/pages?limit=100 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`)
      // A slow reader: it takes a little now and then, so the server holds most of each answer.
      s.pause()
      const drip = setInterval(() => {
        const chunk = s.read(16 * 1024) as Buffer | null
        if (chunk) received += chunk.length
      }, 200)
      s.on('close', () => clearInterval(drip))
      s.on('error', () => {})
      sockets.push(s)
    }
    let peakRss = 0
    let slowestHealth = 0
    const samples: number[] = []
    for (let i = 0; i < 20; i++) {
      const started = performance.now()
      const r = await fetch(`${server.url}/health`)
      assert.equal(r.status, 200)
      slowestHealth = Math.max(slowestHealth, performance.now() - started)
      samples.push(Math.round(performance.now() - started))
      peakRss = Math.max(peakRss, kb('VmRSS', pid))
      await sleep(150)
    }
    peakRss = Math.max(peakRss, kb('VmHWM', pid))
    t.diagnostic(`peak resident ${Math.round(peakRss / 1024)} MB, slowest /health ${Math.round(slowestHealth)} ms (${samples.join(' ')})`)
    assert.ok(received > 0, 'the readers got data')
    assert.ok(peakRss < 512 * 1024, `serve reached ${Math.round(peakRss / 1024)} MB resident`)
    assert.ok(slowestHealth < 1000, `/health took ${Math.round(slowestHealth)} ms`)
  } finally {
    for (const s of sockets) s.destroy()
    assert.equal(await server.stop(), 0)
    rmSync(dir, { recursive: true, force: true })
  }
})
