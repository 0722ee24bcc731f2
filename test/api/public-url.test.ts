import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp } from '../helpers/app.ts'
import { runCli } from '../helpers/cli.ts'

// --public-url (TRAVELOPS_PUBLIC_URL): the address POST /v1/dashboard/links puts in its links,
// whatever Host and X-Forwarded-Proto a request (or a proxy, or an attacker) sends.

describe('--public-url', () => {
  let app: TestApp
  before(async () => {
    app = await startTestApp({ publicUrl: 'https://travelops.example.com/ops' })
  })
  after(() => app.close())

  test('links are built from it, not from the request', async () => {
    const t = await app.tenant()
    const r = await t.request('POST', '/v1/dashboard/links', { headers: { host: 'evil.example', 'x-forwarded-proto': 'http' } })
    assert.equal(r.status, 201, r.text)
    assert.match(r.body.data.url, /^https:\/\/travelops\.example\.com\/ops\/dashboard\/signin#dl_[A-Za-z0-9_-]{43}$/)
  })

  test('serve refuses a value that is not an http(s) URL (exit 2), from the flag or the env twin', async () => {
    for (const [args, env] of [[['--public-url', 'ftp://example.com'], {}], [[], { TRAVELOPS_PUBLIC_URL: 'example.com' }]] as const) {
      const r = await runCli(['serve', '--db', app.dbFile, '--port', '0', ...args], { env })
      assert.equal(r.code, 2, r.stderr)
      assert.match(r.stderr, /invalid --public-url: must be an http\(s\) URL/)
    }
  })
})
