import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp, type TestTenant } from '../helpers/app.ts'
import { runCli, type CliResult } from '../helpers/cli.ts'

// CONTRACT §16 "Durations": one grammar, `<integer><s|m|h|d>`, each input with its range; the
// same table runs against the CLI (exit 0 / 2) and the API (201 / 422), and a refusal names the
// allowed range — nothing is silently capped.

const KEY = 'from 1s to 3650d'
const LINK = 'from 1s to 7d'
const SETTING = 'from 1s to 3650d, or 0'

/** value → accepted as a key's lifetime, a link's lifetime, --retention / --disable-after. */
const TABLE: [value: string, key: boolean, link: boolean, setting: boolean][] = [
  ['1s', true, true, true],
  ['15m', true, true, true],
  ['12h', true, true, true],
  ['7d', true, true, true],
  ['30d', true, false, true],
  ['3650d', true, false, true],
  ['0', false, false, true],
  ['0s', false, false, false],
  ['8d', true, false, true],
  ['3651d', false, false, false],
  ['99999d', false, false, false],
  ['99999999999999999999d', false, false, false],
  ['1w', false, false, false],
  ['1y', false, false, false],
  [' 1d', false, false, false],
  ['1d ', false, false, false],
  ['1D', false, false, false],
  ['1.5h', false, false, false],
  ['-1d', false, false, false],
  ['1', false, false, false],
  ['1h30m', false, false, false],
  ['', false, false, false],
]

/** The CLI runs of a test, three at a time (each is a process start). */
async function cliRuns(argsOf: (value: string, i: number) => [string[], Record<string, string>?]): Promise<CliResult[]> {
  const out: CliResult[] = []
  for (let i = 0; i < TABLE.length; i += 3) {
    out.push(...await Promise.all(TABLE.slice(i, i + 3).map(([value], j) => {
      const [args, env] = argsOf(value, i + j)
      return runCli(args, { env })
    })))
  }
  return out
}

describe('durations: one table, the CLI and the API', () => {
  let app: TestApp
  let t: TestTenant
  before(async () => {
    app = await startTestApp()
    t = await app.tenant()
  })
  after(() => app.close())

  test('a key\'s expires_in (POST /v1/keys) and --expires-in (keys create)', async () => {
    const clis = await cliRuns((value) => [['keys', 'create', '--db', app.dbFile, '--tenant', t.id, '--expires-in', value, '--json']])
    for (const [i, [value, ok]] of TABLE.entries()) {
      const api = await t.request('POST', '/v1/keys', { body: { scopes: ['orders:read'], expires_in: value } })
      assert.equal(api.status, ok ? 201 : 422, `expires_in ${JSON.stringify(value)}: ${api.text}`)
      if (!ok) assert.ok(api.body.error.message.includes(KEY), api.body.error.message)
      const cli = clis[i]!
      assert.equal(cli.code, ok ? 0 : 2, `--expires-in ${JSON.stringify(value)}: ${cli.stderr}`)
      if (!ok) assert.ok(cli.stderr.includes(KEY), cli.stderr)
      if (ok) {
        const lifetime = (k: { created_at: string; expires_at: string }) => Date.parse(k.expires_at) - Date.parse(k.created_at)
        assert.equal(lifetime(JSON.parse(cli.stdout)), lifetime(api.body.data), `${value}: the same lifetime`)
      }
    }
  })

  test('a link\'s expires_in (POST /v1/dashboard/links) and --expires-in (dashboard link)', async () => {
    const clis = await cliRuns((value) => [['dashboard', 'link', '--db', app.dbFile, '--tenant', t.id, '--expires-in', value, '--json']])
    for (const [i, [value, , ok]] of TABLE.entries()) {
      const api = await t.request('POST', '/v1/dashboard/links', { body: { expires_in: value } })
      assert.equal(api.status, ok ? 201 : 422, `expires_in ${JSON.stringify(value)}: ${api.text}`)
      if (!ok) assert.ok(api.body.error.message.includes(LINK), api.body.error.message)
      const cli = clis[i]!
      assert.equal(cli.code, ok ? 0 : 2, `--expires-in ${JSON.stringify(value)}: ${cli.stderr}`)
      if (!ok) assert.ok(cli.stderr.includes(LINK), cli.stderr)
      if (ok) {
        const apiMs = Date.parse(api.body.data.expires_at) - Date.now()
        const cliMs = Date.parse(JSON.parse(cli.stdout).expires_at) - Date.now()
        assert.ok(Math.abs(apiMs - cliMs) < 60_000, `${value}: the same lifetime (${apiMs} vs ${cliMs} ms from now)`)
      }
    }
  })

  test('serve --retention and --disable-after (and their env twins)', async () => {
    // Without --tls-key, serve stops at its configuration: a valid duration gets as far as the
    // TLS pair (exit 2 naming it), an invalid one is refused naming its range.
    // Each value as --retention with TRAVELOPS_DISABLE_AFTER, then as --disable-after with
    // TRAVELOPS_RETENTION, row by row.
    const flags = (i: number) => (i % 2 === 0 ? ['--retention', 'TRAVELOPS_DISABLE_AFTER'] : ['--disable-after', 'TRAVELOPS_RETENTION']) as [string, string]
    const runs = await cliRuns((value, i) => [['serve', '--db', app.dbFile, '--tls-cert', 'none.pem', flags(i)[0], value], { [flags(i)[1]]: value }])
    for (const [i, [value, , , ok]] of TABLE.entries()) {
      const flag = flags(i)[0]
      const r = runs[i]!
      assert.equal(r.code, 2, `${flag} ${JSON.stringify(value)}: ${r.stderr}`)
      if (ok) assert.match(r.stderr, /--tls-cert and --tls-key go together/, `${flag} ${JSON.stringify(value)}`)
      else assert.match(r.stderr, new RegExp(`invalid --(retention|disable-after): must be a duration <integer><s\\|m\\|h\\|d> ${SETTING}`), `${flag} ${JSON.stringify(value)}: ${r.stderr}`)
    }
  })
})
