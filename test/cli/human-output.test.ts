import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { orderBody } from '../helpers/app.ts'
import { apiClient, runCli, runJson, startServe, until, type ServeProcess, migratedDb } from '../helpers/cli.ts'
import { runInPty } from '../helpers/pty.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

// The human output (not --json) of the listing commands, from real data made by a real serve:
// short ids that can be typed back, relative times, colour only on a terminal, --wide.

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/
const GREEN = '\x1b[32m'
const RED = '\x1b[31m'

describe('human output of the CLI', () => {
  let dir: string
  let db: string
  let server: ServeProcess
  let ok: Receiver
  let failing: Receiver
  let tenantId: string
  let keyId: string
  let delivered: any
  let failed: any
  const cli = (args: string[], env: Record<string, string> = {}) => runCli([...args, '--db', db], { env: { NO_COLOR: '', FORCE_COLOR: '', ...env } })

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-human-'))
    db = await migratedDb(join(dir, 'h.db'))
    tenantId = (await runJson(['tenants', 'create', '--name', 'Nordic Trails', '--db', db])).id
    await runJson(['tenants', 'create', '--name', 'Alpine <b>Tours</b>', '--db', db])
    const key = await runJson(['keys', 'create', '--tenant', tenantId, '--name', 'website', '--db', db])
    keyId = key.id
    await runJson(['keys', 'create', '--tenant', tenantId, '--name', 'old', '--scopes', 'orders:read', '--db', db])
    ok = await startReceiver()
    failing = await startReceiver({ respond: [500] })
    server = await startServe(['--db', db, '--allow-private-targets', '--retry-base', '600000', '--log-level', 'warn'])
    const api = apiClient(server.url, key.key)
    for (const url of [`${ok.url}/ok`, `${failing.url}/fail`]) {
      assert.equal((await api('POST', '/v1/webhooks', { url, events: ['order.created'], secret: 'whsec_0123456789abcdef' })).status, 201)
    }
    assert.equal((await api('POST', '/v1/orders', orderBody())).status, 201)
    const both = await until('one delivered and one failed attempt', async () => {
      const list = (await api('GET', '/v1/webhooks/deliveries')).body.data as any[]
      return list.length === 2 && list.every((d) => d.attempts === 1) && list
    })
    delivered = both.find((d: any) => d.status === 'delivered')
    failed = both.find((d: any) => d.status === 'failed')
    assert.ok(delivered && failed, JSON.stringify(both))
  })

  after(async () => {
    await server?.stop()
    await ok?.close()
    await failing?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('deliveries list: aligned columns, short ids that are unique prefixes, relative times, no colour in a pipe', async () => {
    const started = Date.now()
    const r = await cli(['deliveries', 'list'])
    const ended = Date.now()
    assert.equal(r.code, 0, r.stderr)
    const lines = r.stdout.trimEnd().split('\n')
    assert.match(lines[0]!, /^ID +TENANT +WEBHOOK +EVENT +STATUS +ATTEMPTS +CODE +CREATED +NEXT RETRY$/)
    assert.equal(lines.length, 3)
    assert.doesNotMatch(r.stdout, ANSI)
    const row = (d: any) => lines.find((l) => d.id.startsWith(l.split(/\s+/)[0]!))!
    const failedRow = row(failed)
    assert.ok(failedRow, r.stdout)
    const [shortId, tenant, webhook, event, status, attempts, code, ...rest] = failedRow.split(/\s{2,}|\s(?=\d)/).flatMap((c) => c.split(/ {2,}/))
    assert.ok(failed.id.startsWith(shortId!) && shortId!.length < failed.id.length, shortId)
    assert.ok(tenantId.startsWith(tenant!) && tenant!.length < tenantId.length, tenant)
    assert.ok(failed.webhook_id.startsWith(webhook!), webhook)
    assert.deepEqual([event, status, attempts, code], ['order.created', 'failed', '1', '500'])
    // Ten minutes ±10 % of jitter from the failed attempt, in whole minutes left as the CLI ran.
    const due = Date.parse(failed.next_retry_at)
    const minutes = [...new Set([started, ended].map((t) => Math.floor((due - t) / 60_000)))]
    assert.ok(minutes.every((m) => m >= 8 && m <= 10), `next retry ${failed.next_retry_at}`)
    assert.match(rest.join(' '), new RegExp(`^(just now|\\d+ s ago|\\d+ min ago) in (${minutes.join('|')}) min$`), 'created a moment ago, next retry in what is left of ten minutes')
    // Column starts line up on every row.
    const starts = (l: string) => [...l.matchAll(/(?<=\s{2})\S/g)].map((m) => m.index)
    assert.deepEqual(starts(lines[1]!).slice(0, 4), starts(lines[0]!).slice(0, 4))
    // The short ids work as input.
    const shown = await cli(['deliveries', 'show', shortId!, '--json'])
    assert.equal(JSON.parse(shown.stdout).id, failed.id)
    assert.equal(JSON.parse((await cli(['deliveries', 'list', '--tenant', tenant!, '--webhook', webhook!, '--json'])).stdout)[0].id, failed.id)
  })

  test('--wide: full ids, exact times and more columns', async () => {
    const r = await cli(['deliveries', 'list', '--wide'])
    assert.match(r.stdout.split('\n')[0]!, /NEXT RETRY +LAST ATTEMPT +DELIVERED +EVENT ID$/)
    for (const id of [delivered.id, failed.id, tenantId, failed.webhook_id, failed.event_id, failed.created_at, delivered.delivered_at]) assert.ok(r.stdout.includes(id), id)
  })

  test('colour: status and response code on a terminal (or FORCE_COLOR), never with NO_COLOR or --no-color', async () => {
    const forced = await cli(['deliveries', 'list'], { FORCE_COLOR: '1' })
    assert.ok(forced.stdout.includes(`${GREEN}delivered`) && forced.stdout.includes(`${RED}failed`), JSON.stringify(forced.stdout))
    assert.doesNotMatch((await cli(['deliveries', 'list', '--no-color'], { FORCE_COLOR: '1' })).stdout, ANSI)
    assert.doesNotMatch((await cli(['deliveries', 'list'], { FORCE_COLOR: '1', NO_COLOR: '1' })).stdout, ANSI)
    const tty = await runInPty(['deliveries', 'list', '--db', db], { cols: 200, env: { NO_COLOR: '', FORCE_COLOR: '' } })
    assert.equal(tty.code, 0)
    assert.ok(tty.raw.includes(`${GREEN}delivered`), JSON.stringify(tty.raw))
    const plain = await runInPty(['deliveries', 'list', '--db', db], { cols: 200, env: { NO_COLOR: '1', FORCE_COLOR: '' } })
    assert.doesNotMatch(plain.raw, ANSI)
  })

  test('on a 120- or 80-column terminal every line fits: long columns are cut with …, then the least needed left out', async () => {
    for (const cols of [120, 80]) {
      const r = await runInPty(['deliveries', 'list', '--db', db], { cols, env: { NO_COLOR: '1' } })
      const lines = r.output.trimEnd().split('\n')
      assert.equal(lines.length, 3, r.output)
      for (const line of lines) assert.ok([...line].length <= cols, `${[...line].length} > ${cols}: ${line}`)
      assert.match(lines[0]!, /^ID +.*EVENT +STATUS +.*CREATED\b/, 'the essential columns stay')
    }
    const narrow = await runInPty(['deliveries', 'list', '--db', db], { cols: 80, env: { NO_COLOR: '1' } })
    assert.doesNotMatch(narrow.output, /TENANT/, 'the tenant column is the first to go')
    const wide = await runInPty(['deliveries', 'list', '--db', db, '--wide'], { cols: 80, env: { NO_COLOR: '1' } })
    assert.ok(wide.output.includes(failed.id), '--wide is never cut')
  })

  test('deliveries show: the record with its attempts as a table and the payload', async () => {
    const r = await cli(['deliveries', 'show', failed.id])
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, new RegExp(`^delivery +${failed.id}\\nstatus +failed +1 attempt\\nevent +order.created +${failed.event_id}\\n`))
    assert.match(r.stdout, /^ *# +AT +TRIGGER +CODE +DURATION +ERROR$/m)
    assert.match(r.stdout, /^ *1 +(just now|\d+ s ago) +auto +500 +\d+ ms +/m)
    assert.match(r.stdout, /payload:\n\{\n {2}"id": "evt_/)
  })

  test('tenants and keys: short ids, names as text, key status, empty states that say what to do', async () => {
    const tenants = await cli(['tenants', 'list'])
    assert.match(tenants.stdout, /^ID +NAME +CREATED\n/)
    assert.ok(tenants.stdout.includes('Alpine <b>Tours</b>'))
    // Revoked by the short id `keys list` shows (keys made by processes a moment apart can share
    // their first 20 characters: the id's leading window is 256 ms).
    const shortId = /^(\S+) +website /m.exec((await cli(['keys', 'list', '--tenant', tenantId])).stdout)?.[1]
    assert.ok(shortId && keyId.startsWith(shortId) && shortId.length < keyId.length, shortId)
    const revoked = await cli(['keys', 'revoke', shortId, '--yes'])
    assert.equal(revoked.code, 0, revoked.stderr)
    const keys = await cli(['keys', 'list', '--tenant', tenantId])
    assert.match(keys.stdout, /^ID +NAME +PREFIX +SCOPES +STATUS +LIMIT\/H +LAST USED +EXPIRES\n/)
    assert.match(keys.stdout, /website +tok_\S+ +\* +revoked +default +(just now|\d+ s ago) +never/)
    assert.match(keys.stdout, /old +tok_\S+ +orders:read +active +default +never +never/)
    const other = JSON.parse((await cli(['tenants', 'list', '--json'])).stdout).find((t: any) => t.id !== tenantId)
    const none = await cli(['keys', 'list', '--tenant', other.id])
    assert.equal(none.stdout, `no keys for ${other.id}: create one with travelops keys create --tenant ${other.id}\n`)
  })

  test('a prefix that names several records is refused with the candidates; a malformed one is a usage error', async () => {
    const ids = JSON.parse((await cli(['tenants', 'list', '--json'])).stdout).map((t: any) => t.id) as string[]
    // UUIDv7: the first hex digits are the time's top bits, the same for tenants made a moment apart.
    const prefix = ids[0]!.slice(0, 8)
    assert.ok(ids[1]!.startsWith(prefix))
    const r = await cli(['keys', 'list', '--tenant', prefix])
    assert.equal(r.code, 1)
    assert.match(r.stderr, new RegExp(`${prefix} names more than one tenant \\(.*${ids[1]}`))
    assert.equal((await cli(['keys', 'list', '--tenant', 'ten_'])).code, 2, 'too short to be a prefix')
    assert.equal((await cli(['keys', 'list', '--tenant', 'ord_0123'])).code, 2, 'another type')
    assert.equal((await cli(['deliveries', 'show', 'del_ffff'])).code, 1, 'names nothing')
  })

  test('migrate --status', async () => {
    const r = await cli(['migrate', '--status'])
    assert.match(r.stdout, /^MIGRATION +STATUS +APPLIED\n0001_init\.sql +applied +(just now|\d+ (s|min) ago)\n/)
  })
})

describe('progress on stderr, on a terminal only', () => {
  test('backup and migrate show progress on a terminal; in a pipe stderr stays empty', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'travelops-progress-'))
    try {
      const db = join(dir, 'p.db')
      const first = await runInPty(['migrate', '--db', db])
      assert.equal(first.code, 0, first.output)
      assert.match(first.output, /applying 0001_init\.sql \(1 of \d+\)…\napplied 0001_init\.sql in \d+\.\d s\n/)
      // Enough pages for several steps of the copy.
      const { openSqlite } = await import('../../src/engine/sqlite/sqlite.ts')
      const sqlite = openSqlite(db)
      sqlite.exec("CREATE TABLE filler (b BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) INSERT INTO filler SELECT randomblob(4000) FROM n")
      sqlite.close()
      const tty = await runInPty(['backup', join(dir, 'b.db'), '--db', db])
      assert.equal(tty.code, 0, tty.output)
      assert.match(tty.raw, /backing up \d+% \(\d+\.\d MB of \d+\.\d MB\)/)
      assert.match(tty.output, /backed up .* \(\d+ bytes, \d+ pages\)/)
      const piped = await runCli(['backup', join(dir, 'c.db'), '--db', db])
      assert.equal(piped.code, 0)
      assert.equal(piped.stderr, '')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
