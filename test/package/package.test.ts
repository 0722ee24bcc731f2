// The packaged executable, run the way an operator runs it: dist/travelops copied alone into an
// empty directory, no Node.js on PATH, no node_modules anywhere above it, a fresh HOME.
// Slow (it builds the executable), so it is not part of `npm test`: run `npm run test:package`.
// TRAVELOPS_SKIP_BUILD=1 reuses dist/travelops when it is newer than every input.
import assert from 'node:assert/strict'
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { createHash, createHmac } from 'node:crypto'
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, test } from 'node:test'
import { readMigrationDir } from '../../src/db/migration-files.ts'
import { assertShellBlocksRun, shellPages } from '../helpers/readme.ts'
import { launchChromium, newWatchedPage } from '../helpers/browser.ts'
import { checkDocsPage } from '../helpers/docs-page.ts'
import { freePort, startPgServer } from '../helpers/pg-server.ts'
import { startReceiver, type ReceivedRequest, type Receiver } from '../helpers/receiver.ts'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** The native addon the executable embeds (scripts/package.ts). */
const ADDON = join(ROOT, 'node_modules', 'better-sqlite3', 'prebuilds', 'linux-x64.node')
const DIST_EXE = join(ROOT, 'dist', 'travelops')
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
const BUILD_INPUTS = ['package.json', 'package-lock.json', 'cli', 'src', 'migrations', 'dashboard', 'scripts/package.ts']

interface Sandbox {
  root: string
  exe: string // the executable, alone in its directory
  home: string
  tmp: string
  work: string // cwd of every run; database files live here
}

let sb: Sandbox

before(() => {
  ensureExecutable()
  sb = makeSandbox()
})

after(async () => {
  await e2e.server?.stop()
  await e2e.receiver?.close()
  rmSync(sb.root, { recursive: true, force: true })
})

// ---- steps: the executable alone ----------------------------------------------------

test('the sandbox has no Node 24 on PATH and no node_modules above it', () => {
  assert.deepEqual(readdirSync(dirname(sb.exe)), ['travelops'])
  for (const dir of [dirname(sb.exe), sb.work]) {
    for (let d = dir; ; d = dirname(d)) {
      assert.equal(existsSync(join(d, 'node_modules')), false, `${d} has node_modules`)
      if (dirname(d) === d) break
    }
  }
  const found = spawnSync('/bin/sh', ['-c', 'command -v node && node --version'], { env: baseEnv(sb), encoding: 'utf8' })
  assert.doesNotMatch(found.stdout, /^v24\./m, `a Node 24 is reachable on PATH: ${found.stdout}`)
})

test('--version prints the version from package.json, and nothing else (the code caches are taken)', () => {
  const res = run(sb, ['--version'])
  assert.equal(res.stdout.trim(), PKG.version)
  // A code cache made under other V8 flags than the executable's is rejected, and that is said on
  // stderr: by Node for the main script's, by the main script for the bundle's trained one.
  assert.equal(res.stderr, '')
})

test('the build is byte-reproducible: building again gives the same executable', () => {
  const first = createHash('sha256').update(readFileSync(DIST_EXE)).digest('hex')
  buildExecutable()
  assert.equal(createHash('sha256').update(readFileSync(DIST_EXE)).digest('hex'), first)
})

test('--help lists the commands', () => {
  const help = run(sb, ['--help']).stdout
  assert.match(help, /Usage: travelops/)
  for (const cmd of ['serve', 'migrate', 'tenants', 'keys', 'deliveries', 'verify', 'backup']) assert.match(help, new RegExp(`^  ${cmd}\\b`, 'm'))
})

test('an unknown command is a usage error (exit 2)', () => {
  run(sb, ['no-such-command'], {}, 2)
})

test('NODE_OPTIONS cannot change the executable', () => {
  const res = run(sb, ['--version'], { NODE_OPTIONS: '--require /nonexistent/hook.js' })
  assert.equal(res.stdout.trim(), PKG.version)
})

// ---- steps: the native SQLite addon and the embedded migrations ----------------------

test('migrate applies the embedded migrations to a fresh database file', () => {
  const db = join(sb.work, 'fresh.db')
  assert.deepEqual(migrateFresh(sb, db).applied, embeddedMigrationNames())
  const status = runJson(sb, ['migrate', '--status', '--db', db]) as unknown as { name: string; applied_at: string | null }[]
  assert.deepEqual(status.map((m) => m.name), embeddedMigrationNames())
  assert.ok(status.every((m) => m.applied_at !== null))
})

test('the native addon is extracted once to ~/.cache/travelops/<hash>/ and reused', () => {
  const file = cachedAddon(join(sb.home, '.cache', 'travelops'))
  const before = statSync(file)
  migrateFresh(sb, join(sb.work, 'again.db'))
  const after = statSync(file)
  assert.equal(after.ino, before.ino, 'the cached addon was rewritten')
  assert.equal(after.mtimeMs, before.mtimeMs)
})

test('a damaged cached addon is replaced', () => {
  const file = cachedAddon(join(sb.home, '.cache', 'travelops'))
  writeFileSync(file, 'not a shared object')
  migrateFresh(sb, join(sb.work, 'repaired.db'))
  assert.ok(readFileSync(file).equals(readFileSync(ADDON)), 'the cached addon is not the embedded one')
})

test('a cached addon of the right size but other bytes is replaced too', () => {
  const file = cachedAddon(join(sb.home, '.cache', 'travelops'))
  const damaged = readFileSync(file)
  const at = damaged.length >> 1
  damaged[at] = damaged[at]! ^ 0xff
  writeFileSync(file, damaged)
  migrateFresh(sb, join(sb.work, 'repaired-again.db'))
  assert.ok(readFileSync(file).equals(readFileSync(ADDON)), 'the cached addon is not the embedded one')
})

test('TRAVELOPS_CACHE_DIR chooses the cache directory', () => {
  const cache = join(sb.root, 'custom-cache')
  migrateFresh(sb, join(sb.work, 'custom.db'), { TRAVELOPS_CACHE_DIR: cache })
  cachedAddon(cache)
})

test('without a usable home directory the addon goes to the temporary directory', () => {
  migrateFresh(sb, join(sb.work, 'nohome.db'), { HOME: '/dev/null/nohome', XDG_CACHE_HOME: '' })
  cachedAddon(join(sb.tmp, `travelops-${process.getuid?.() ?? 'user'}`))
})

// ---- steps: end to end, in order, on one database --------------------------------------

const e2e = {
  db: '', tenantId: '', key: '', url: '', server: undefined as Serve | undefined,
  receiver: undefined as Receiver | undefined, webhookId: '', orderId: '', received: undefined as ReceivedRequest | undefined,
}
const WEBHOOK_SECRET = 'whsec_packaged_0123456789'

test('e2e: migrate, tenants create', () => {
  e2e.db = join(sb.work, 'e2e.db')
  migrateFresh(sb, e2e.db)
  const tenant = runJson(sb, ['tenants', 'create', '--name', 'Packaged Tours', '--db', e2e.db])
  assert.match(String(tenant.id), /^ten_/)
  e2e.tenantId = String(tenant.id)
  const list = runJson(sb, ['tenants', 'list', '--db', e2e.db]) as unknown as { id: string }[]
  assert.deepEqual(list.map((t) => t.id), [e2e.tenantId])
})

test('e2e: keys create', () => {
  const key = runJson(sb, ['keys', 'create', '--tenant', e2e.tenantId, '--name', 'e2e', '--db', e2e.db])
  assert.equal(key.tenant_id, e2e.tenantId)
  e2e.key = String(key.key)
})

test('e2e: serve on port 0 answers /health', async () => {
  e2e.server = await serve(sb, ['--port', '0', '--db', e2e.db, '--allow-private-targets'])
  e2e.url = e2e.server.url
  const res = await fetch(`${e2e.url}/health`)
  assert.equal(res.status, 200)
  assert.deepEqual(await res.json(), { status: 'ok' })
})

test('e2e: serve answers /v1/openapi.json', async () => {
  const res = await fetch(`${e2e.url}/v1/openapi.json`)
  assert.equal(res.status, 200)
  const doc = (await res.json()) as { openapi: string; info: { version: string }; paths: Record<string, unknown> }
  assert.match(doc.openapi, /^3\.1/)
  assert.equal(doc.info.version, PKG.version)
  assert.ok('/v1/orders' in doc.paths)
})

test('e2e: create a webhook to a receiver on 127.0.0.1', async () => {
  e2e.receiver = await startReceiver()
  const res = await fetch(`${e2e.url}/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${e2e.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${e2e.receiver.url}/hooks`, events: ['order.created'], secret: WEBHOOK_SECRET }),
  })
  assert.equal(res.status, 201, await res.clone().text())
  e2e.webhookId = ((await res.json()) as { data: { id: string } }).data.id
})

test('e2e: create an order through the API', async () => {
  const res = await fetch(`${e2e.url}/v1/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${e2e.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
      items: [{ description: 'Harbour tour', quantity: 3, unitPrice: 0.1 }],
      currency: 'EUR',
    }),
  })
  assert.equal(res.status, 201, await res.clone().text())
  assert.equal(res.headers.get('x-tenant-id'), e2e.tenantId)
  const { data } = (await res.json()) as { data: { id: string; total: number } }
  assert.match(data.id, /^ord_/)
  assert.equal(data.total, 0.3)
  e2e.orderId = data.id
})

test('e2e: the receiver gets the signed order.created webhook', async () => {
  const [req] = await e2e.receiver!.waitFor(1, 15_000)
  e2e.received = req!
  const body = JSON.parse(req!.body) as { id: string; event: string; timestamp: string; tenant_id: string; data: { id: string } }
  assert.equal(req!.method, 'POST')
  assert.equal(req!.url, '/hooks')
  assert.equal(req!.headers['content-type'], 'application/json')
  assert.equal(req!.headers['user-agent'], `travelops/${PKG.version}`)
  assert.equal(req!.headers['x-webhook-signature'], createHmac('sha256', WEBHOOK_SECRET).update(req!.body).digest('hex'))
  assert.equal(req!.headers['x-webhook-id'], body.id)
  assert.equal(req!.headers['x-webhook-timestamp'], body.timestamp)
  assert.equal(body.event, 'order.created')
  assert.equal(body.tenant_id, e2e.tenantId)
  assert.equal(body.data.id, e2e.orderId)
})

test('e2e: deliveries list and show print the delivery', async () => {
  let list: { id: string; status: string; webhook_id: string; event_id: string }[] = []
  for (let i = 0; i < 100; i++) {
    list = runJson(sb, ['deliveries', 'list', '--db', e2e.db]) as unknown as typeof list
    if (list[0]?.status === 'delivered') break
    await new Promise((r) => setTimeout(r, 100)) // let the receiver in this process answer meanwhile
  }
  assert.equal(list.length, 1)
  assert.equal(list[0]!.status, 'delivered')
  assert.equal(list[0]!.webhook_id, e2e.webhookId)
  assert.equal(list[0]!.event_id, e2e.received!.headers['x-webhook-id'])
  const shown = runJson(sb, ['deliveries', 'show', list[0]!.id, '--db', e2e.db])
  assert.equal(JSON.stringify(shown.payload), e2e.received!.body)
})

test('e2e: backup while serve runs gives a copy the executable can read', () => {
  const dest = join(sb.work, 'backup.db')
  const report = runJson(sb, ['backup', dest, '--db', e2e.db])
  assert.equal(report.backup, dest)
  assert.equal(report.bytes, statSync(dest).size)
  const copied = runJson(sb, ['deliveries', 'list', '--db', dest]) as unknown as { event_id: string }[]
  assert.deepEqual(copied.map((d) => d.event_id), [e2e.received!.headers['x-webhook-id']])
  run(sb, ['backup', dest, '--db', e2e.db], {}, 1) // exists, no --force
})

test('e2e: verify checks the received body and signature', () => {
  const body = e2e.received!.body
  const sig = String(e2e.received!.headers['x-webhook-signature'])
  const file = join(sb.work, 'body.json')
  writeFileSync(file, body)
  assert.equal(run(sb, ['verify', '--secret', WEBHOOK_SECRET, '--signature', sig, '--file', file]).stdout, 'valid\n')
  assert.equal(run(sb, ['verify', '--secret', WEBHOOK_SECRET, '--signature', `sha256=${sig}`], {}, 0, body).stdout, 'valid\n')
  assert.equal(run(sb, ['verify', '--secret', 'not-the-secret-at-all', '--signature', sig, '--file', file], {}, 1).stdout, 'invalid\n')
  assert.equal(run(sb, ['verify', '--secret', WEBHOOK_SECRET, '--signature', sig], {}, 1, body.replace('order.created', 'order.updated')).stdout, 'invalid\n')
  const json = run(sb, ['verify', '--secret', WEBHOOK_SECRET, '--signature', sig, '--file', file, '--json'])
  assert.deepEqual(JSON.parse(json.stdout), { valid: true })
  run(sb, ['verify', '--signature', sig, '--file', file], {}, 2)
})

test('e2e: the dashboard opens from the executable in Chromium (its files are inside it)', async () => {
  const link = runJson(sb, ['dashboard', 'link', '--db', e2e.db, '--base-url', e2e.url])
  const browser = await launchChromium()
  try {
    const context = await browser.newContext()
    const { page, watched } = await newWatchedPage(context)
    await page.goto(String(link.url))
    await page.waitForURL('**/dashboard/tenants')
    await page.getByRole('link', { name: 'Packaged Tours' }).click()
    await page.getByRole('heading', { name: 'Overview' }).waitFor()
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Deliveries' }).click()
    await page.locator('tr[data-delivery]').first().waitFor()
    assert.deepEqual(watched.problems, [])
  } finally {
    await browser.close()
  }
})

test('e2e: /docs and its scripts come from the executable and render the document in Chromium', async () => {
  const html = await (await fetch(`${e2e.url}/docs`)).text()
  const scripts = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]!)
  assert.equal(scripts.length, 2, html)
  for (const src of scripts) {
    const r = await fetch(`${e2e.url}${src}`)
    assert.equal(r.status, 200, src)
    assert.ok((await r.arrayBuffer()).byteLength > 100, src)
  }
  const browser = await launchChromium()
  try {
    await checkDocsPage(browser, e2e.url)
  } finally {
    await browser.close()
  }
})

test('e2e: SIGTERM stops serve with exit code 0', async () => {
  assert.equal(await e2e.server!.stop(), 0)
  e2e.server = undefined
})

// ---- harness --------------------------------------------------------------------------

/** Builds dist/travelops, or checks that a requested reuse is of a fresh one. */
function ensureExecutable(): void {
  if (process.env.TRAVELOPS_SKIP_BUILD === '1') {
    assert.ok(existsSync(DIST_EXE), 'TRAVELOPS_SKIP_BUILD=1 but dist/travelops does not exist')
    const built = statSync(DIST_EXE).mtimeMs
    const stale = BUILD_INPUTS.flatMap((p) => _files(join(ROOT, p))).filter((f) => statSync(f).mtimeMs > built)
    assert.deepEqual(stale, [], 'TRAVELOPS_SKIP_BUILD=1 but dist/travelops is older than these inputs')
    return
  }
  buildExecutable()
}

/** `npm run package`: dist/travelops from the sources. */
function buildExecutable(): void {
  const res = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'package.ts')], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 600_000,
  })
  assert.equal(res.status, 0, `npm run package failed:\n${res.stdout}\n${res.stderr}`)
}

function makeSandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'travelops-pkg-'))
  const s: Sandbox = {
    root,
    exe: join(root, 'bin', 'travelops'),
    home: join(root, 'home'),
    tmp: join(root, 'tmp'),
    work: join(root, 'work'),
  }
  for (const d of [dirname(s.exe), s.home, s.tmp, s.work]) mkdirSync(d, { recursive: true })
  copyFileSync(DIST_EXE, s.exe)
  chmodSync(s.exe, 0o755)
  return s
}

/** PATH without any Node (only the system directories), a private HOME and TMPDIR. */
function baseEnv(s: Sandbox): NodeJS.ProcessEnv {
  return { PATH: '/usr/bin:/bin', HOME: s.home, TMPDIR: s.tmp, LANG: 'C' }
}

function run(s: Sandbox, args: string[], env: NodeJS.ProcessEnv = {}, expectStatus = 0, input = ''): SpawnSyncReturns<string> {
  const res = spawnSync(s.exe, args, { cwd: s.work, env: { ...baseEnv(s), ...env }, encoding: 'utf8', timeout: 30_000, input })
  if (res.error) throw res.error
  assert.equal(res.status, expectStatus, `travelops ${args.join(' ')} exited ${res.status}\n${res.stdout}\n${res.stderr}`)
  return res
}

function runJson(s: Sandbox, args: string[], env: NodeJS.ProcessEnv = {}): Record<string, unknown> {
  return JSON.parse(run(s, [...args, '--json'], env).stdout) as Record<string, unknown>
}

/** `travelops migrate` on a database file that does not exist yet. */
function migrateFresh(s: Sandbox, db: string, env: NodeJS.ProcessEnv = {}): { applied: string[] } {
  assert.equal(existsSync(db), false)
  const report = runJson(s, ['migrate', '--db', db], env) as { applied: string[] }
  assert.ok(existsSync(db), `${db} was not created`)
  return report
}

interface Serve {
  url: string
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>
}

/** Starts `travelops serve` and waits for the line with its URL. */
function serve(s: Sandbox, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Serve> {
  const child = spawn(s.exe, ['serve', ...args], { cwd: s.work, env: { ...baseEnv(s), ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    return exited
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`serve printed no URL within 15 s\n${stdout}\n${stderr}`))
    }, 15_000)
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
      const url = /http:\/\/[^\s]+:\d+/.exec(stdout)?.[0]
      if (url) {
        clearTimeout(timer)
        resolve({ url, stop })
      }
    })
    exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`serve exited ${code} before listening\n${stdout}\n${stderr}`))
    })
  })
}

/** The one extracted addon under `cacheDir`, in the directory named by the first 16 hex digits of its sha256. */
function cachedAddon(cacheDir: string): string {
  const entries = readdirSync(cacheDir)
  assert.equal(entries.length, 1, `expected one <hash> directory in ${cacheDir}: ${entries.join(', ')}`)
  assert.equal(entries[0], createHash('sha256').update(readFileSync(ADDON)).digest('hex').slice(0, 16))
  const file = join(cacheDir, entries[0]!, 'better_sqlite3.node')
  assert.ok(existsSync(file), `${file} missing`)
  return file
}

function embeddedMigrationNames(): string[] {
  return readMigrationDir(join(ROOT, 'migrations')).map((m) => m.name)
}

function _files(path: string): string[] {
  if (!existsSync(path)) return []
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .map((f) => join(path, f))
    .filter((f) => statSync(f).isFile())
}

test('every sh block of the README and of docs/ runs with the executable as ./travelops (no Node on PATH)', async () => {
  const ports = [await freePort(), await freePort()]
  for (const page of shellPages(ROOT)) {
    const dir = mkdtempSync(join(sb.tmp, 'readme-'))
    await assertShellBlocksRun(join(ROOT, page), { travelops: sb.exe, dir, ports, env: baseEnv(sb) as Record<string, string> })
  }
})

test('on PostgreSQL: migrate (embedded PostgreSQL migrations), tenants, keys, serve and an order, db copy back to a file', async () => {
  const server = await startPgServer() // Debian's postgresql, which .ci/run installs
  try {
    const url = server.url
    assert.deepEqual(runJson(sb, ['migrate', '--db', url]).applied, embeddedMigrationNames())
    const tenant = runJson(sb, ['tenants', 'create', '--name', 'Packaged on PostgreSQL', '--db', url])
    const key = String(runJson(sb, ['keys', 'create', '--tenant', String(tenant.id), '--db', url]).key)
    const s = await serve(sb, ['--db', url, '--port', '0', '--log-level', 'warn'])
    try {
      const res = await fetch(`${s.url}/v1/orders`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ customer: { firstName: 'Ada', lastName: 'L', email: 'ada@example.com' }, items: [{ description: 'x', quantity: 1, unitPrice: 10 }], currency: 'EUR' }),
      })
      assert.equal(res.status, 201)
    } finally {
      assert.equal(await s.stop(), 0)
    }
    const copied = runJson(sb, ['db', 'copy', '--from', url, '--to', join(sb.work, 'from-pg.db')]) as { tables: Record<string, number> }
    assert.equal(copied.tables.orders, 1)
    assert.equal(run(sb, ['backup', 'x.db', '--db', url], {}, 2).stderr.includes('pg_dump'), true)
  } finally {
    await server.stop()
  }
})
