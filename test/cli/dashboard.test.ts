import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { migratedDb, runCli, runJson, startServe, type ServeProcess } from '../helpers/cli.ts'

// `travelops dashboard link|revoke` (CONTRACT §14) against a running serve, on either engine:
// the printed link signs in once, revoke ends the sessions it names, usage errors exit 2.

const signIn = (url: string) => {
  const u = new URL(url)
  return fetch(`${u.origin}/v1/dashboard/sessions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: u.hash.slice(1) }),
  })
}
const whoAmI = (base: string, cookie: string) =>
  fetch(`${base}/v1/dashboard/session`, { headers: { cookie, 'x-requested-with': 'travelops-dashboard' } })

describe('travelops dashboard', () => {
  let dir: string
  let db: string
  let serve: ServeProcess
  let tenant: { id: string }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-cli-dashboard-'))
    db = await migratedDb(join(dir, 'travelops.db'))
    tenant = await runJson(['tenants', 'create', '--db', db, '--name', 'Links & Co'])
    serve = await startServe(['--db', db, '--log-level', 'error'])
  })
  after(async () => {
    await serve.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  test('link --json: the operator\'s and a tenant\'s (by id prefix); each works once', async () => {
    const op = await runJson(['dashboard', 'link', '--db', db, '--base-url', serve.url])
    assert.deepEqual(Object.keys(op).sort(), ['expires_at', 'role', 'url'])
    assert.equal(op.role, 'operator')
    assert.match(op.url, new RegExp(`^${serve.url}/dashboard/signin#dl_[A-Za-z0-9_-]{43}$`))
    const ms = Date.parse(op.expires_at) - Date.now()
    assert.ok(ms > 14 * 60_000 && ms <= 15 * 60_000, `default 15 min, got ${ms} ms`)
    const first = await signIn(op.url)
    assert.equal(first.status, 201)
    assert.equal((await signIn(op.url)).status, 401)

    const t = await runJson(['dashboard', 'link', '--db', db, '--base-url', `${serve.url}/`, '--tenant', tenant.id.slice(0, 14), '--expires-in', '1h'])
    assert.equal(t.role, 'tenant')
    const session = (await (await signIn(t.url)).json()) as { data: { tenant_id: string; tenant_name: string } }
    assert.equal(session.data.tenant_id, tenant.id)
    assert.equal(session.data.tenant_name, 'Links & Co')
  })

  test('without --json it prints the URL on the first line, at the running serve\'s address, and says who it is for', async () => {
    const r = await runCli(['dashboard', 'link', '--db', db, '--tenant', tenant.id], { env: { PORT: '8443' } })
    assert.equal(r.code, 0, r.stderr)
    const [url, blank, who] = r.stdout.split('\n')
    assert.ok(url!.startsWith(`${serve.url}/dashboard/signin#dl_`), `${url} is not at ${serve.url}`)
    assert.equal(blank, '')
    assert.match(who!, new RegExp(`^Tenant ${tenant.id}; works once, until `))
    assert.equal((await signIn(url!)).status, 201)
  })

  test('with no serve running: PORT and TRAVELOPS_TLS_CERT, else http://localhost:3000; a stopped serve is forgotten', async () => {
    const other = await migratedDb(join(dir, 'other.db'))
    const second = await startServe(['--db', other, '--log-level', 'error'])
    try {
      assert.ok((await runJson(['dashboard', 'link', '--db', other])).url.startsWith(`${second.url}/dashboard/signin#`))
      // --base-url, when given, wins (the address a proxy publishes).
      assert.ok((await runJson(['dashboard', 'link', '--db', other, '--base-url', 'https://travelops.example.com'])).url.startsWith('https://travelops.example.com/dashboard/signin#'))
    } finally {
      assert.equal(await second.stop(), 0)
    }
    // A serve behind a proxy (--public-url) is named by its public address.
    const proxied = await startServe(['--db', other, '--log-level', 'error', '--public-url', 'https://ops.example.com/travelops'])
    try {
      const link = await runJson(['dashboard', 'link', '--db', other])
      assert.ok(link.url.startsWith('https://ops.example.com/travelops/dashboard/signin#'), link.url)
    } finally {
      assert.equal(await proxied.stop(), 0)
    }
    const r = await runCli(['dashboard', 'link', '--db', other])
    assert.match(r.stdout, /^http:\/\/localhost:3000\/dashboard\/signin#dl_/)
    const env = await runCli(['dashboard', 'link', '--db', other], { env: { PORT: '8443', TRAVELOPS_TLS_CERT: 'cert.pem' } })
    assert.match(env.stdout, /^https:\/\/localhost:8443\/dashboard\/signin#/)
  })

  test('revoke --tenant ends that tenant\'s sessions only; --all ends every one', async () => {
    const cookieOf = async (args: string[]) => {
      const l = await runJson(['dashboard', 'link', '--db', db, '--base-url', serve.url, ...args])
      return (await signIn(l.url)).headers.get('set-cookie')!.split(';')[0]!
    }
    const mine = await cookieOf(['--tenant', tenant.id])
    const op = await cookieOf([])
    assert.equal((await whoAmI(serve.url, mine)).status, 200)
    const r = await runJson(['dashboard', 'revoke', '--db', db, '--tenant', tenant.id])
    assert.ok(r.ended >= 1)
    assert.equal((await whoAmI(serve.url, mine)).status, 401)
    assert.equal((await whoAmI(serve.url, op)).status, 200)
    const human = await runCli(['dashboard', 'revoke', '--db', db, '--all'])
    assert.match(human.stdout, /^ended \d+ sessions?\n$/)
    assert.equal((await whoAmI(serve.url, op)).status, 401)
  })

  test('usage errors exit 2 with what to do; an unknown tenant exits 1', async () => {
    for (const [args, message] of [
      [['link', '--expires-in', 'soon'], /--expires-in must be a duration/],
      [['link', '--expires-in', '8d'], /from 1s to 7d/],
      [['link', '--base-url', 'localhost:3000'], /--base-url must/],
      [['link', '--base-url', 'ftp://example.com'], /http:\/\/ or https:\/\//],
      [['revoke'], /either --tenant <ten_id> or --all/],
      [['revoke', '--all', '--tenant', tenant.id], /either --tenant <ten_id> or --all/],
    ] as const) {
      const r = await runCli(['dashboard', ...args, '--db', db])
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
      assert.match(r.stderr, message)
    }
    const unknown = await runCli(['dashboard', 'link', '--db', db, '--tenant', 'ten_ffffffff'])
    assert.equal(unknown.code, 1)
  })

  test('serve --no-dashboard and TRAVELOPS_DASHBOARD=0 serve no dashboard; =1 does', async () => {
    for (const [args, env, served] of [
      [['--no-dashboard'], {}, false], [[], { TRAVELOPS_DASHBOARD: '0' }, false], [[], { TRAVELOPS_DASHBOARD: '1' }, true],
    ] as const) {
      // PostgreSQL takes several serve processes; on SQLite the one running is stopped first.
      const other = db.startsWith('postgres') ? undefined : serve
      await other?.stop()
      const s = await startServe(['--db', db, '--log-level', 'error', ...args], env)
      try {
        const page = await fetch(`${s.url}/dashboard`)
        assert.equal(page.status, served ? 200 : 404, `${args.join(' ')} ${JSON.stringify(env)}`)
        await page.arrayBuffer()
      } finally {
        await s.stop()
        if (other) serve = await startServe(['--db', db, '--log-level', 'error'])
      }
    }
  })
})
